// test_backend_agreement.cpp — one body of tests per Backend operation, and a whole model's explicit products, run on
// every backend that was built and compared with the CPU backend's results (the reference) to kBackendTol, as ggml's
// test-backend-ops does. The CPU instances (tag [backend]) check the bodies themselves; the CUDA instances (tag
// [cuda], only in a CUDA build) skip visibly without a GPU (backends.hpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <utility>

#include "backends.hpp"
#include "gradflow/core/rng.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/run/analyze.hpp"
#include "gradflow/run/context.hpp"
#include "tolerances.hpp"

using namespace gradflow;
using gradflow::test::backend_or_skip;
using gradflow::test::kBackendTol;

namespace {

Mat random_mat(Index r, Index c, const std::string& stream, double scale = 1.0) {
  Mat m(r, c);
  Rng(12, stream).fill_normal(m, scale);
  return m;
}

// ‖got − want‖ / ‖want‖ without overflow at any finite scale (stableNorm)
template <class A>
double rel_err(const A& got, const A& want) {
  if (want.size() == 0) return got.size() == 0 ? 0.0 : 1.0;
  const double w = want.stableNorm();
  return w == 0 ? (got - want).stableNorm() : (got - want).stableNorm() / w;
}

bool close(double got, double want) { return std::fabs(got - want) <= kBackendTol * std::fabs(want); }

// upload/to_host round trips, P·B for token-wise (square and rectangular blocks) and dense B, densify
void check_products(BackendKind kind) {
  const auto cpu = make_backend(BackendKind::Cpu);
  const auto be = backend_or_skip(kind);
  const Index n = 3;
  for (const auto& [d_out, d_in] : {std::pair<Index, Index>{4, 4}, {4, 3}, {2, 5}}) {
    std::vector<Mat> blocks;
    for (Index i = 0; i < n; ++i) blocks.push_back(random_mat(d_out, d_in, "block" + std::to_string(i)));
    const Jacobian Bt = Jacobian::tokenwise(blocks);
    const Jacobian Bd = Jacobian::dense(random_mat(n * d_out, n * d_in, "dense"), n);
    for (const Index r : {n * d_out, Index(7)}) {
      const Mat P = random_mat(r, n * d_out, "P");
      INFO(to_string(kind) << " d_out " << d_out << " d_in " << d_in << " rows of P " << r);
      const auto up = be->upload(P);
      CHECK(up->rows() == r);
      CHECK(up->cols() == n * d_out);
      CHECK(up->to_host() == P);  // a copy, exact
      for (const Jacobian* B : {&Bt, &Bd}) {
        const Mat want = cpu->multiply(cpu->upload(P), *B)->to_host();
        const Mat got = be->multiply(be->upload(P), *B)->to_host();
        REQUIRE(got.rows() == want.rows());
        REQUIRE(got.cols() == want.cols());
        CHECK(rel_err(got, want) <= kBackendTol);
        CHECK(be->densify(Jacobian(*B))->to_host() == B->to_dense());  // a copy, exact
      }
    }
  }
}

// all_finite, Frobenius and spectral norms, ‖A − I‖₂, all singular values: square and both rectangular shapes (both
// Gram orientations, both gesvd layouts), at scales where squares would over- or underflow, and the zero matrix
void check_norms(BackendKind kind) {
  const auto cpu = make_backend(BackendKind::Cpu);
  const auto be = backend_or_skip(kind);
  for (const auto& [r, c] : {std::pair<Index, Index>{12, 12}, {9, 14}, {14, 9}, {1, 6}}) {
    for (const double scale : {1.0, 1e150, 1e-150}) {
      INFO(to_string(kind) << " shape (" << r << ", " << c << ") scale " << scale);
      const Mat A = random_mat(r, c, "A" + std::to_string(r), scale);
      const auto a = be->upload(A), ref = cpu->upload(A);
      CHECK(be->all_finite(*a));
      CHECK(close(be->frobenius_norm(*a), cpu->frobenius_norm(*ref)));
      CHECK(close(be->spectral_norm(*a), cpu->singular_values(*ref)(0)));
      CHECK(close(be->spectral_norm(*a), cpu->spectral_norm(*ref)));
      const Vec got = be->singular_values(*a), want = cpu->singular_values(*ref);
      REQUIRE(got.size() == want.size());
      CHECK(rel_err(got, want) <= kBackendTol);
      if (r == c) {
        const IdentityDistance got_d = be->minus_identity_norms(*a), want_d = cpu->minus_identity_norms(*ref);
        CHECK(close(got_d.spectral, want_d.spectral));
        CHECK(close(got_d.frobenius, want_d.frobenius));
      }
    }
  }
  const auto zero = be->upload(Mat::Zero(5, 7));
  CHECK(be->all_finite(*zero));
  CHECK(be->frobenius_norm(*zero) == 0.0);
  CHECK(be->spectral_norm(*zero) == 0.0);
  CHECK(be->singular_values(*zero) == Vec::Zero(5));
  const IdentityDistance zero_d = be->minus_identity_norms(*be->upload(Mat::Zero(6, 6)));
  CHECK(close(zero_d.spectral, 1.0));
  CHECK(close(zero_d.frobenius, std::sqrt(6.0)));
  const Mat A = random_mat(10, 10, "finite");
  for (const auto& [i, j, v] : {std::tuple<Index, Index, double>{0, 0, std::numeric_limits<double>::quiet_NaN()},
                                {9, 9, std::numeric_limits<double>::infinity()},
                                {4, 7, -std::numeric_limits<double>::infinity()}}) {
    Mat bad = A;
    bad(i, j) = v;
    INFO(to_string(kind) << " non-finite at (" << i << ", " << j << ")");
    CHECK(!be->all_finite(*be->upload(bad)));
  }
}

RunConfig model_config(const std::string& placement, Index d, Index heads, Index n, Index layers) {
  RunConfig rc;
  rc.model.placement = placement;
  rc.model.layers = layers;
  rc.model.d_model = d;
  rc.model.heads = heads;
  rc.model.d_ff = 2 * d;
  rc.analysis.seq_len = n;
  rc.analysis.progress = false;
  rc.analysis.engine_request = EngineRequest::Explicit;
  rc.analysis.spectrum = true;
  rc.init.seed = 5;
  return rc;
}

// A whole model: every P_l of the walk, and the analyze report's norms and spectra of every B_l and P_l
void check_model(BackendKind kind) {
  backend_or_skip(kind);  // skips before any work when there is no GPU
  struct Case {
    const char* placement;
    Index d, heads, n, layers;
  };
  for (const Case& t : {Case{"post", 8, 2, 4, 3}, Case{"pre", 8, 2, 4, 3}, Case{"sandwich", 8, 2, 4, 2},
                        Case{"pre", 16, 4, 12, 2}}) {
    INFO(to_string(kind) << " " << t.placement << " d " << t.d << " n " << t.n << " L " << t.layers);
    RunConfig rc = model_config(t.placement, t.d, t.heads, t.n, t.layers);
    // the walk's dense products, entry by entry
    Model model(rc.model);
    initialize(model, rc.init);
    const Mat x0 = random_normal(1, "input", t.n, t.d);
    AnalysisOptions on_cpu = rc.analysis, on_kind = rc.analysis;
    on_kind.backend = kind;
    const AnalysisContext ref(model, x0, on_cpu, make_backend(BackendKind::Cpu), nullptr, 3),
        ctx(model, x0, on_kind, backend_or_skip(kind), nullptr, 3);
    std::vector<Mat> want(static_cast<size_t>(t.layers));
    ref.for_each_product([&](Index l, const Mat&, const Mat& P) { want[static_cast<size_t>(l)] = P; });
    Index visited = 0;
    ctx.for_each_product([&](Index l, const DenseBuffer& B, const DenseBuffer& P) {
      CHECK(B.rows() == t.n * t.d);
      CHECK(rel_err(P.to_host(), want[static_cast<size_t>(l)]) <= kBackendTol);
      ++visited;
    });
    CHECK(visited == t.layers);
    // the report: every norm of every layer, and the spectra as vectors
    const auto a = analyze(rc);
    rc.analysis.backend = kind;
    const auto b = analyze(rc);
    if (kind != BackendKind::Cpu) {
      CHECK(b["config"]["device"] == to_string(kind));
      CHECK(b["config"]["device_description"].get<std::string>().rfind("cuda:", 0) == 0);
    } else {
      CHECK(!b["config"].contains("device"));  // CPU reports are unchanged
    }
    REQUIRE(b["layers"].size() == a["layers"].size());
    for (size_t l = 0; l < a["layers"].size(); ++l) {
      INFO("layer " << l);
      const auto &la = a["layers"][l], &lb = b["layers"][l];
      CHECK(lb["grad_norm"] == la["grad_norm"]);  // the backward pass runs on the CPU either way
      for (const char* part : {"block_jacobian", "product_jacobian"}) {
        INFO(part);
        for (const char* key : {"spectral_norm", "frobenius_norm", "rms_gain"})
          CHECK(close(lb[part][key].get<double>(), la[part][key].get<double>()));
        const auto& sa = la[part]["spectrum"]["singular_values"];
        const auto& sb = lb[part]["spectrum"]["singular_values"];
        REQUIRE(sa.size() == sb.size());
        Vec va(static_cast<Index>(sa.size())), vb(static_cast<Index>(sb.size()));
        for (size_t i = 0; i < sa.size(); ++i) {
          va(static_cast<Index>(i)) = sa[i].get<double>();
          vb(static_cast<Index>(i)) = sb[i].get<double>();
        }
        CHECK(rel_err(vb, va) <= kBackendTol);
      }
      CHECK(close(lb["block_jacobian"]["minus_identity_spectral_norm"].get<double>(),
                  la["block_jacobian"]["minus_identity_spectral_norm"].get<double>()));
      CHECK(lb["product_jacobian"]["numerical_rank"] == la["product_jacobian"]["numerical_rank"]);
    }
  }
}

}  // namespace

TEST_CASE("backend agreement cpu: products", "[backend]") { check_products(BackendKind::Cpu); }
TEST_CASE("backend agreement cpu: norms and singular values", "[backend]") { check_norms(BackendKind::Cpu); }
TEST_CASE("backend agreement cpu: a whole model's explicit products", "[backend]") { check_model(BackendKind::Cpu); }

TEST_CASE("backend: --device cuda refuses the engines that do not use it, before any work", "[backend]") {
  for (const EngineRequest r : {EngineRequest::GradientsOnly}) {
    RunConfig rc = model_config("pre", 8, 2, 4, 2);
    rc.analysis.backend = BackendKind::Cuda;
    rc.analysis.engine_request = r;
    rc.analysis.spectrum = false;
    INFO(to_string(r));
    try {
      analyze(rc);
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.exit_code() == 2);
      CHECK(std::string(e.what()).find("--device cuda runs the Jacobian products of explicit, streamed and matrix-free "
                                       "mode, not gradients-only mode") != std::string::npos);
    }
  }
}

#ifdef GRADFLOW_HAVE_CUDA
TEST_CASE("backend agreement cuda: products", "[cuda]") { check_products(BackendKind::Cuda); }
TEST_CASE("backend agreement cuda: norms and singular values", "[cuda]") { check_norms(BackendKind::Cuda); }
TEST_CASE("backend agreement cuda: a whole model's explicit products", "[cuda]") { check_model(BackendKind::Cuda); }
#endif
