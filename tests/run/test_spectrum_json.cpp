// test_spectrum.cpp — the --spectrum object (src/report/spectrum_json.cpp): every singular value and its summary
// (largest, smallest, median, numerical rank, log10 condition number over the numerical range), and the
// explicit analysis writes it for every B_l and P_l.
#include <catch2/catch.hpp>

#include <cmath>

#include "gradflow/run/analyze.hpp"
#include "gradflow/linalg/svd.hpp"
#include "matrix_free/small_context.hpp"
#include "gradflow/report/spectrum_json.hpp"
#include "tolerances.hpp"

using namespace gradflow;
using namespace gradflow::test;
using Json = nlohmann::ordered_json;

TEST_CASE("spectrum_json: summary statistics of a known spectrum", "[spectrum]") {
  Vec s(5);
  s << 100.0, 10.0, 4.0, 1.0, 1e-14;  // the last is below kRankRtol·σ_max: rounding noise
  const Json j = spectrum_json(s);
  REQUIRE(j["singular_values"].size() == 5);
  REQUIRE(j["largest"].get<double>() == 100.0);
  REQUIRE(j["smallest"].get<double>() == 1e-14);
  REQUIRE(j["median"].get<double>() == 4.0);
  REQUIRE(j["numerical_rank"].get<Index>() == 4);
  REQUIRE(j["log10_condition_number"].get<double>() == Approx(2.0).epsilon(kClosedFormTol));
  Vec e(4);
  e << 4.0, 3.0, 2.0, 1.0;
  REQUIRE(spectrum_json(e)["median"].get<double>() == 2.5);
}

TEST_CASE("analyze --spectrum writes the spectra of every B_l and P_l", "[spectrum]") {
  RunConfig rc;
  rc.model = small_model("pre", 3);
  rc.analysis.seq_len = 4;
  rc.analysis.progress = false;
  rc.analysis.engine_request = EngineRequest::Explicit;
  rc.analysis.spectrum = true;
  const auto r = analyze(rc);
  const Index N = 4 * 8;
  for (const auto& l : r["layers"])
    for (const char* grp : {"block_jacobian", "product_jacobian"}) {
      const auto& sp = l[grp]["spectrum"];
      REQUIRE(sp["singular_values"].size() == static_cast<size_t>(N));
      REQUIRE(sp["largest"].get<double>() == Approx(l[grp]["spectral_norm"].get<double>()).epsilon(kSpectralNormTol));
      double sq = 0;
      for (const auto& v : sp["singular_values"]) sq += v.get<double>() * v.get<double>();
      REQUIRE(std::sqrt(sq) == Approx(l[grp]["frobenius_norm"].get<double>()).epsilon(kSvdTol));
    }
}
