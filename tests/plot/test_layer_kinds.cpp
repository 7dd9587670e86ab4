// test_layer_kinds.cpp — the per-layer kinds of the rank-collapse quantities: `token-geometry` (a panel per
// quantity, a line per report or compare group) and `attention-entropy` (layer x head heatmap of H/H_max).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "gradflow/plot/kinds.hpp"
#include "gradflow/plot/style.hpp"
#include "plot/plot_fixtures.hpp"

using namespace gradflow;
using namespace gradflow::test;

namespace {

// analyze_report plus layers[l].token_geometry (cosine rising to `top_cos`) and layers[l].attention with `heads`
// heads: head h of layer l has entropy (1 - 0.1·h - 0.05·l)·ln 4, maximum ln 4.
J with_geometry(J r, double top_cos, int heads) {
  const size_t L = r["layers"].size();
  for (size_t l = 0; l < L; ++l) {
    const double c = top_cos * double(l) / double(L - 1);
    r["layers"][l]["token_geometry"] = {{"mean_cosine", c}, {"rank_one_distance", std::pow(10.0, -3.0 * c)}, {"stable_rank", 4 - 3 * c}};
    J hs = J::array();
    for (int h = 0; h < heads; ++h) hs.push_back({{"entropy", (1 - 0.1 * h - 0.05 * double(l)) * std::log(4.0)}, {"self_attention", 0.25}});
    r["layers"][l]["attention"] = {{"entropy", 0.5}, {"max_entropy", std::log(4.0)}, {"self_attention", 0.25}, {"heads", hs}};
  }
  return r;
}

// compare_report plus the per-layer means of the same quantities.
J compare_with_geometry() {
  J r = compare_report({"post", "pre"}, {4});
  for (auto& g : r["groups"])
    for (auto& layer : g["per_layer"]) {
      const double l = layer["index"].get<double>();
      layer["token_geometry.mean_cosine"] = stat(0.2 * l, 0.01);
      layer["token_geometry.rank_one_distance"] = stat(1 - 0.2 * l, 0.01);
      layer["token_geometry.stable_rank"] = stat(3 - 0.5 * l, 0.1);
      layer["attention.entropy"] = stat(std::log(4.0) * (1 - 0.1 * l), 0.01);
      layer["attention.max_entropy"] = stat(std::log(4.0), 0);
    }
  return r;
}

}  // namespace

TEST_CASE("token-geometry and attention-entropy render from analyze and compare reports", "[gnuplot]") {
  require_gnuplot();
  TempDir dir;
  const std::string post = write_json(dir, "post.json", with_geometry(analyze_report("post", 6, 1, 0.8), 0.99, 4));
  const std::string pre = write_json(dir, "pre.json", with_geometry(analyze_report("pre", 6, 1, 1), 0.6, 4));
  const std::string cmp = write_json(dir, "cmp.json", compare_with_geometry());
  for (const std::string kind : {"token-geometry", "attention-entropy"})
    for (const auto& inputs : std::vector<std::vector<std::string>>{{post, pre}, {cmp}})
      for (const std::string ext : {"pdf", "png"}) {
        PlotOptions o;
        o.kind = kind;
        o.inputs = inputs;
        o.output = dir.file(kind + "." + ext);
        o.dpi = 100;
        INFO(kind << " " << inputs.front() << " -> " << ext);
        make_plot(o, "test");
        const std::string bytes = read_bytes(o.output);
        if (ext == "pdf") REQUIRE(pdf_pages(bytes) == 1);
        else REQUIRE(png_size(bytes).first == 350);
      }
}

TEST_CASE("token-geometry: a panel per quantity, a line per report, the quantities' symbols on the axes", "[quick]") {
  TempDir dir;
  PlotOptions o;
  o.kind = "token-geometry";
  o.inputs = {write_json(dir, "post.json", with_geometry(analyze_report("post", 3, 1, 0.8), 0.9, 2)),
              write_json(dir, "pre.json", with_geometry(analyze_report("pre", 3, 1, 1), 0.5, 2))};
  o.output = dir.file("tg.svg");
  o.render = false;
  make_plot(o, "test");
  const std::string data = read_bytes(dir.file("tg.svg.dat")), script = read_bytes(dir.file("tg.svg.gp"));
  // short panel labels (the metric's own "distance of x_l to rank one" was cut off in a one-column figure)
  REQUIRE(script.find("set ylabel 'mean token cosine'") != std::string::npos);
  REQUIRE(script.find("set ylabel 'rank-one distance'") != std::string::npos);
  REQUIRE(script.find("set ylabel 'stable rank'") != std::string::npos);
  // post's cosine 0, 0.45, 0.9 by layer is the first block
  REQUIRE(data.find("0 0\n1 0.45000000000000001\n2 0.90000000000000002\n") != std::string::npos);
  // a report without token geometry: one line naming the fix
  o.inputs = {write_json(dir, "old.json", analyze_report("post", 3, 1, 0.8))};
  const std::string e = error_of([&] { make_plot(o, ""); });
  REQUIRE(e.find("no token geometry") == 0);
  REQUIRE(e.find("fix:") != std::string::npos);
}

TEST_CASE("attention-entropy: H/H_max per layer and head, colours over their span, a panel per report", "[quick]") {
  TempDir dir;
  PlotOptions o;
  o.kind = "attention-entropy";
  o.inputs = {write_json(dir, "post.json", with_geometry(analyze_report("post", 3, 1, 0.8), 0.9, 2))};
  o.output = dir.file("ae.svg");
  o.render = false;
  make_plot(o, "test");
  const std::string data = read_bytes(dir.file("ae.svg.dat")), script = read_bytes(dir.file("ae.svg.gp"));
  // the colours span the values, rounded out to 0.05 (issue 38: not [0, 1], where 0.8 and 1 looked alike)
  const auto at = script.find("set cbrange [");
  REQUIRE(at != std::string::npos);
  const double lo = std::stod(script.substr(at + 13)), hi = std::stod(script.substr(script.find(':', at) + 1));
  REQUIRE(lo == Approx(0.8));
  REQUIRE(hi == Approx(1.0));
  REQUIRE(script.find("set logscale cb") == std::string::npos);
  REQUIRE(script.find("contour") == std::string::npos);
  // head 1 of layer 2: 1 - 0.1 - 0.1 = 0.8 (cell x = 1, y = 2)
  REQUIRE(data.find("\n1 2 ") != std::string::npos);
  REQUIRE(data.find(" " + gp_num((1 - 0.1 - 0.1) * std::log(4.0) / std::log(4.0)) + "\n") != std::string::npos);
  // a compare report: layer x group of the mean over heads
  o.inputs = {write_json(dir, "cmp.json", compare_with_geometry())};
  make_plot(o, "test");
  REQUIRE(read_bytes(dir.file("ae.svg.dat")).find("mean over heads and seeds") != std::string::npos);
  o.inputs = {write_json(dir, "old.json", analyze_report("post", 3, 1, 0.8))};
  const std::string e = error_of([&] { make_plot(o, ""); });
  REQUIRE(e.find("no attention heads") == 0);
  REQUIRE(e.find("fix:") != std::string::npos);
}
