// test_coord_check_kind.cpp — `--kind coord-check` from a real coord-check report (train/coord_check.hpp): every
// format renders, the legend names the steps, each panel's title carries the report's growth exponent at the last
// step, and inputs it cannot draw are refused by name.
#include <catch2/catch.hpp>

#include <cstdio>

#include "gradflow/plot/kinds.hpp"
#include "gradflow/train/coord_check.hpp"
#include "plot/plot_fixtures.hpp"

using namespace gradflow;
using namespace gradflow::test;

namespace {

J small_coord_check() {
  CoordCheckConfig c;
  c.base.model.placement = "pre";
  c.base.model.layers = 2;
  c.base.model.d_model = 8;
  c.base.model.heads = 2;
  c.base.task.name = "copy";
  c.base.task.vocab = 8;
  c.base.task.seq_len = 6;
  c.base.batch = 2;
  c.base.steps = 3;
  c.base.schedule = "constant";
  c.base.lr = 1e-2;
  c.widths = {8, 16, 32};
  c.seeds = 2;
  return coord_check(c);
}

}  // namespace

TEST_CASE("coord-check kind: panels titled with the report's exponents, a line per step", "[gnuplot]") {
  require_gnuplot();
  TempDir dir;
  const J report = small_coord_check();
  const std::string in = write_json(dir, "cc.json", report);
  for (const std::string ext : {"svg", "png", "pdf"}) {
    PlotOptions o;
    o.kind = "coord-check";
    o.inputs = {in};
    o.output = dir.file("cc." + ext);
    o.width = 7;
    o.dpi = 100;
    make_plot(o, "test");
    const std::string bytes = read_bytes(o.output);
    if (ext == "pdf") CHECK(pdf_pages(bytes) == 1);
    if (ext == "png") CHECK(png_size(bytes).first == 700);
    if (ext != "svg") continue;
    CHECK(xml_problem(bytes) == "");
    for (const char* t : {">t = 1 (init)<", ">t = 2<", ">t = 3<"}) CHECK(bytes.find(t) != std::string::npos);
    for (const auto& v : report["axes"][0]["verdicts"]) {
      if (v["t"] != 3 || std::string(v["quantity"]).rfind("update:", 0) == 0) continue;
      std::string q = v["quantity"];
      for (auto& ch : q) ch = ch == '_' ? ' ' : ch;
      char title[96];
      std::snprintf(title, sizeof title, "%s, b = %+.2f", q.c_str(), v["exponent"].get<double>());
      INFO(title);
      CHECK(bytes.find(title) != std::string::npos);
    }
  }
  PlotOptions o;
  o.kind = "coord-check";
  o.inputs = {in, in};
  o.output = dir.file("two.svg");
  CHECK_THROWS_WITH(make_plot(o, "test"), Catch::Contains("one gradflow coord-check report"));
  o.inputs = {write_json(dir, "post.json", analyze_report("post", 4, 1.0, 0.7))};
  CHECK_THROWS_WITH(make_plot(o, "test"), Catch::Contains("coord-check"));
}
