// test_kinds.cpp — every figure kind renders to every format: PDF (header, one page), SVG (well-formed XML
// holding the series names), PNG (the requested pixel size), with the script and data left beside it.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "gradflow/io/npy.hpp"
#include "gradflow/plot/kinds.hpp"
#include "plot/plot_fixtures.hpp"

using namespace gradflow;
using namespace gradflow::test;

namespace {

struct Case {
  std::string kind;
  std::vector<std::string> inputs;
  std::vector<std::string> names;  // legend entries the SVG must hold
  PlotOptions extra;               // kind-specific options (inputs, kind, output filled in here)
};

void check_outputs(const Case& c, const TempDir& dir) {
  for (const std::string ext : {"pdf", "svg", "png"}) {
    PlotOptions o = c.extra;
    o.kind = c.kind;
    o.inputs = c.inputs;
    o.output = dir.file(c.kind + "." + ext);
    o.width = 4;
    o.dpi = 100;
    INFO(c.kind << " -> " << o.output);
    const RenderedFiles f = make_plot(o, "test");
    REQUIRE(std::filesystem::exists(f.script));
    REQUIRE(std::filesystem::exists(f.data));
    REQUIRE(f.script == o.output + ".gp");  // named after the whole figure name: one per format
    const std::string bytes = read_bytes(o.output);
    if (ext == "pdf") {
      REQUIRE(bytes.rfind("%PDF-", 0) == 0);
      REQUIRE(pdf_pages(bytes) == 1);
    } else if (ext == "svg") {
      REQUIRE(xml_problem(bytes) == "");
      for (const auto& n : c.names) {
        INFO("series " << n);
        REQUIRE(bytes.find(">" + n + "<") != std::string::npos);
      }
    } else {
      const auto [w, h] = png_size(bytes);
      REQUIRE(w == 400);  // 4 in at 100 dpi
      REQUIRE(h > 0);
      if (c.extra.height > 0) REQUIRE(h == static_cast<uint32_t>(std::lround(c.extra.height * 100)));
    }
    for (const auto& e : std::filesystem::directory_iterator(dir.path()))  // no temporary file left behind
      REQUIRE(e.path().filename().string().find(".tmp.") == std::string::npos);
  }
}

}  // namespace

TEST_CASE("each kind writes a valid PDF, SVG and PNG with its script and data", "[gnuplot]") {
  require_gnuplot();
  TempDir dir;
  const std::string post = write_json(dir, "post.json", analyze_report("post", 6, 1.0, 0.7));
  const std::string pre = write_json(dir, "pre.json", analyze_report("pre", 6, 1.0, 1.0));
  const std::string cmp = write_json(dir, "cmp.json", compare_report({"post", "pre"}, {6}));
  const std::string depths = write_json(dir, "depths.json", compare_report({"post", "pre"}, {2, 4, 8}));
  const std::string sweep = write_json(dir, "sweep.json", sweep_report(false));
  const std::string cat = write_json(dir, "cat.json", sweep_report(true));
  Mat J = Mat::Zero(12, 12);  // 3 tokens of d = 4: block diagonal plus weak mixing
  for (int i = 0; i < 12; ++i)
    for (int j = 0; j < 12; ++j) J(i, j) = (i / 4 == j / 4 ? 1.0 : 1e-3) * (1 + 0.1 * ((i * 7 + j) % 5));
  write_npy(dir.file("J.npy"), J);

  std::vector<Case> cases;
  cases.push_back({"grad-by-depth", {post, pre}, {"Post-LN", "Pre-LN"}, {}});
  cases.push_back({"grad-by-depth", {cmp}, {"Post-LN", "Pre-LN"}, {}});
  PlotOptions param;
  param.param = "linear2.weight";
  cases.push_back({"grad-by-depth", {post}, {"Post-LN"}, param});
  cases.push_back({"jacobian-norms", {post, pre}, {"Post-LN", "Pre-LN"}, {}});
  cases.push_back({"jacobian-norms", {cmp}, {"Post-LN", "Pre-LN"}, {}});
  PlotOptions at;
  at.at = {0, 5};
  cases.push_back({"spectrum", {post}, {}, at});  // titles P_0, P_5 are enhanced text (italic P, subscript)
  at.matrix = "B";
  cases.push_back({"spectrum", {post, dir.file("J.npy")}, {"J"}, at});
  cases.push_back({"sensitivity", {sweep}, {"Post-LN", "Pre-LN"}, {}});
  cases.push_back({"sensitivity", {cat}, {"Post-LN", "Pre-LN"}, {}});
  cases.push_back({"sensitivity", {depths}, {"Post-LN", "Pre-LN"}, {}});
  PlotOptions tokens;
  tokens.tokens = 3;
  tokens.height = 3;
  cases.push_back({"heatmap", {dir.file("J.npy")}, {}, tokens});
  cases.push_back({"heatmap", {dir.file("J.npy")}, {}, {}});
  cases.push_back({"claims", {cmp, sweep, depths}, {"Post-LN / Pre-LN", "Post-LN", "Pre-LN", "article"}, {}});
  for (const auto& c : cases) check_outputs(c, dir);
}

TEST_CASE("the data file holds each series as a block, the script reads it by index") {
  TempDir dir;
  PlotOptions o;
  o.kind = "grad-by-depth";
  o.inputs = {write_json(dir, "a.json", analyze_report("post", 3, 1.0, 0.5)),
              write_json(dir, "b.json", analyze_report("pre", 3, 1.0, 1.0))};
  o.output = dir.file("fig.svg");
  o.render = false;
  make_plot(o, "test");
  REQUIRE_FALSE(std::filesystem::exists(o.output));
  const std::string data = read_bytes(dir.file("fig.svg.dat")), script = read_bytes(dir.file("fig.svg.gp"));
  REQUIRE(data.find("# Post-LN\n# x y\n0 0.25\n1 0.5\n2 1\n\n\n# Pre-LN\n") == 0);
  REQUIRE(script.find("data index 0 using 1:2") != std::string::npos);
  REQUIRE(script.find("data index 1 using 1:2") != std::string::npos);
  REQUIRE(script.find("set logscale y") != std::string::npos);  // grad-by-depth: log y
  REQUIRE(script.find("set terminal svg") != std::string::npos);
  REQUIRE(script.find("font 'serif") != std::string::npos);
  REQUIRE(script.find("size 252,189") != std::string::npos);  // 3.5 in × 0.75, in points
}

TEST_CASE("grad-by-depth of a two-stream report (resi-dual) draws the pair and each stream") {
  TempDir dir;
  J r = analyze_report("resi-dual", 3, 1.0, 0.5);
  for (auto& layer : r["layers"]) {  // the pair's norm from the two streams' (x_d's: the same at every depth)
    layer["grad_norm_x_d"] = 0.2;
    layer["grad_norm_x_a"] = std::sqrt(std::pow(layer["grad_norm"].get<double>(), 2) - 0.04);
  }
  PlotOptions o;
  o.kind = "grad-by-depth";
  o.inputs = {write_json(dir, "a.json", r)};
  o.output = dir.file("fig.svg");
  o.render = false;
  make_plot(o, "test");
  const std::string data = read_bytes(dir.file("fig.svg.dat"));
  INFO(data);
  REQUIRE(data.find("# ResiDual (pair)\n# x y\n0 0.25\n") == 0);
  REQUIRE(data.find("# ResiDual (x_a)\n") != std::string::npos);
  REQUIRE(data.find("# ResiDual (x_d)\n# x y\n0 0.20000000000000001\n1 0.20000000000000001\n") != std::string::npos);
}

TEST_CASE("grad-by-depth: a deep model's line keeps about 8 markers, a shallow one all of them") {
  TempDir dir;
  PlotOptions o;
  o.kind = "grad-by-depth";
  o.inputs = {write_json(dir, "deep.json", analyze_report("post", 96, 1.0, 0.99)),
              write_json(dir, "shallow.json", analyze_report("pre", 6, 1.0, 1.0))};
  o.output = dir.file("fig.svg");
  o.render = false;
  make_plot(o, "test");
  const std::string script = read_bytes(dir.file("fig.svg.gp"));
  const size_t deep = script.find("data index 0 using 1:2"), shallow = script.find("data index 1 using 1:2");
  REQUIRE(deep != std::string::npos);
  REQUIRE(shallow != std::string::npos);
  REQUIRE(script.substr(deep, script.find('\n', deep) - deep).find("pointinterval 12") != std::string::npos);
  REQUIRE(script.substr(shallow, script.find('\n', shallow) - shallow).find("pointinterval") == std::string::npos);
}

TEST_CASE("inputs the kinds cannot use give one-line errors naming the fix") {
  TempDir dir;
  PlotOptions o;
  o.inputs = {write_json(dir, "a.json", analyze_report("post", 3, 1.0, 0.5))};
  o.output = dir.file("fig.svg");
  o.render = false;
  o.kind = "grad-by-depth";
  o.param = "nope.weight";
  REQUIRE(error_of([&] { make_plot(o, ""); }).find("--param 'nope.weight' is not in") != std::string::npos);
  REQUIRE(error_of([&] { make_plot(o, ""); }).find("linear2.weight") != std::string::npos);
  o.param.clear();
  o.kind = "violin";
  REQUIRE(error_of([&] { make_plot(o, ""); }).find("--kind 'violin' is unknown; fix: use one of grad-by-depth") == 0);
  o.kind = "spectrum";
  J r = analyze_report("post", 3, 1.0, 0.5);
  r["layers"][0]["product_jacobian"].erase("spectrum");
  o.inputs = {write_json(dir, "nospec.json", r)};
  REQUIRE(error_of([&] { make_plot(o, ""); }).find("rerun gradflow analyze with --spectrum") != std::string::npos);
  o.kind = "sensitivity";
  REQUIRE(error_of([&] { make_plot(o, ""); }).find("fix: pass the --json of gradflow sweep") != std::string::npos);
  o.kind = "heatmap";
  write_bytes(dir.file("bad.json"), "{\"x\": 1}");
  o.inputs = {dir.file("bad.json")};
  REQUIRE(error_of([&] { make_plot(o, ""); }).find("neither an analyze report") != std::string::npos);
  write_npy(dir.file("J.npy"), Mat::Ones(6, 6));
  o.inputs = {dir.file("J.npy")};
  o.tokens = 4;
  REQUIRE(error_of([&] { make_plot(o, ""); }).find("--tokens 4 does not divide") == 0);
  o.output = dir.file("fig.jpg");
  o.tokens = 3;
  REQUIRE(error_of([&] { make_plot(o, ""); }).find("-o '") == 0);
  REQUIRE_FALSE(std::filesystem::exists(dir.file("fig.jpg.gp")));  // nothing written before the options are checked
}

TEST_CASE("legend entries name what differs between reports") {
  std::vector<PlotInput> in(3);
  in[0].json = analyze_report("post", 6, 1, 1);
  in[1].json = analyze_report("post", 12, 1, 1);
  in[2].json = analyze_report("pre", 6, 1, 1);
  std::vector<const PlotInput*> p = {&in[0], &in[1], &in[2]};
  // the placements as papers name them (the registry's display names), then what differs
  REQUIRE(report_labels(p) == std::vector<std::string>{"Post-LN, L=6", "Post-LN, L=12", "Pre-LN, L=6"});
  in[1].json = in[0].json;
  in[0].stem = "a", in[1].stem = "b", in[2].stem = "c";
  REQUIRE(report_labels(p) == std::vector<std::string>{"a", "b", "c"});  // identical configs: the file names
  REQUIRE(group_labels(compare_report({"post", "pre"}, {2, 4})) ==
          std::vector<std::string>{"Post-LN, L=2", "Post-LN, L=4", "Pre-LN, L=2", "Pre-LN, L=4"});
  REQUIRE(placement_label("no-such-scheme") == "no-such-scheme");  // a report of another version: its own word
}
