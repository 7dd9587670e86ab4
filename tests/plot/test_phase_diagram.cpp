// test_phase_diagram.cpp — `--kind phase-diagram` of a 2-D sweep and of a train-sweep: the figure renders (PDF, SVG,
// PNG), log axes for scales, the cells and contour lines in the data file, one colour box for all panels, and
// one-line errors for what it cannot draw.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "gradflow/plot/kinds.hpp"
#include "gradflow/plot/style.hpp"
#include "plot/plot_fixtures.hpp"

using namespace gradflow;
using namespace gradflow::test;

namespace {

PlotOptions options(const std::string& input, const std::string& output) {
  PlotOptions o;
  o.kind = "phase-diagram";
  o.inputs = {input};
  o.output = output;
  return o;
}

// The blocks of a data file (separated by two blank lines), without their comment lines.
std::vector<std::vector<std::string>> blocks(const std::string& data) {
  std::vector<std::vector<std::string>> out(1);
  std::istringstream in(data);
  std::string line;
  int blank = 0;
  while (std::getline(in, line)) {
    if (line.empty()) {
      if (++blank == 2) out.emplace_back();
      continue;
    }
    blank = 0;
    if (line[0] != '#') out.back().push_back(line);
  }
  return out;
}

}  // namespace

TEST_CASE("phase-diagram renders a 2-D sweep and a train-sweep to PDF, SVG and PNG", "[gnuplot]") {
  require_gnuplot();
  TempDir dir;
  const std::string sweep = write_json(dir, "s2.json", sweep2d_report());
  const std::string train = write_json(dir, "ts.json", train_sweep_report({"post", "pre"}, {6}, {0, 10, 100}, {1e-3, 1e-2}));
  for (const std::string& input : {sweep, train})
    for (const std::string ext : {"pdf", "svg", "png"}) {
      PlotOptions o = options(input, dir.file("pd." + ext));
      o.dpi = 100;
      if (input == sweep) o.metric = "top.token_geometry.mean_cosine";
      INFO(input << " -> " << o.output);
      make_plot(o, "test");
      const std::string bytes = read_bytes(o.output);
      if (ext == "pdf") {
        REQUIRE(bytes.rfind("%PDF-", 0) == 0);
        REQUIRE(pdf_pages(bytes) == 1);
      } else if (ext == "svg") {
        REQUIRE(xml_problem(bytes) == "");
        REQUIRE(bytes.find(">Post-LN<") != std::string::npos);  // the panels' titles: the display names
        REQUIRE(bytes.find(">Pre-LN<") != std::string::npos);
      } else {
        REQUIRE(png_size(bytes).first == 350);  // 3.5 in at 100 dpi
      }
      for (const auto& e : std::filesystem::directory_iterator(dir.path()))
        REQUIRE(e.path().filename().string().find(".tmp.") == std::string::npos);
    }
}

TEST_CASE("phase-diagram: scales on log axes named by their values, cells and contours as data blocks", "[quick]") {
  TempDir dir;
  PlotOptions o = options(write_json(dir, "s2.json", sweep2d_report()), dir.file("pd.svg"));
  o.metric = "top.token_geometry.mean_cosine";
  o.render = false;
  make_plot(o, "test");
  const std::string data = read_bytes(dir.file("pd.svg.dat")), script = read_bytes(dir.file("pd.svg.gp"));
  // post: cells, contour lines, labels; then pre's three blocks
  const auto b = blocks(data);
  REQUIRE(b.size() == 6);
  REQUIRE(b[0].size() == 15);  // 5 init scales x 3 depths
  // init-scale is a scale: x = log10 C, so C = 0.25 sits at log10 0.25; layers 2, 4, 8 are geometric: log too
  REQUIRE(b[0][0].rfind(gp_num(std::log10(0.25)) + " " + gp_num(std::log10(2.0)) + " ", 0) == 0);
  REQUIRE(data.find("x = log10 init-scale, y = log10 layers") != std::string::npos);
  REQUIRE(script.find("set xtics ('0.25' " + gp_num(std::log10(0.25))) != std::string::npos);
  REQUIRE(script.find("'8' " + gp_num(std::log10(8.0))) != std::string::npos);
  // the cosine spans (0.51, 1): linear colours, contours at 0.6, 0.7, 0.8, 0.9, each labelled once
  REQUIRE(script.find("set logscale cb") == std::string::npos);
  REQUIRE(b[2].size() == 4);
  REQUIRE(b[2][0].find("\"0.6\"") != std::string::npos);
  REQUIRE(b[2][3].find("\"0.9\"") != std::string::npos);
  REQUIRE(b[5].size() == 4);
  REQUIRE(script.find("with boxxyerror") != std::string::npos);
  // one colour scale: the same range in both panels, one colour box (the last panel's)
  const std::string range =
      "set cbrange [" + gp_num(1 - std::exp(-0.25 * 2 / 16) / 2) + ":" + gp_num(1 - std::exp(-4.0 * 8 / 4) / 2) + "]";
  REQUIRE(script.find(range) != std::string::npos);
  REQUIRE(script.find(range, script.find(range) + 1) != std::string::npos);
  REQUIRE(script.find("unset colorbox") != std::string::npos);
  REQUIRE(script.find("set colorbox user") != std::string::npos);
  // --levels chooses the lines; a metric spanning decades gets a log colour scale and decade contours
  o.levels = {0.55, 0.9};
  make_plot(o, "test");
  const auto chosen = blocks(read_bytes(dir.file("pd.svg.dat")));
  REQUIRE(chosen[2].size() == 1);  // post's cosine spans 0.558 to 1: only 0.9 crosses it
  REQUIRE(chosen[2][0].find("\"0.9\"") != std::string::npos);
  REQUIRE(chosen[5].size() == 2);  // pre's spans 0.515 to 0.932: both
  o.levels.clear();
  o.metric = "summary.bottom_to_top_grad_ratio";
  make_plot(o, "test");
  const std::string log_script = read_bytes(dir.file("pd.svg.gp"));
  REQUIRE(log_script.find("set logscale cb") != std::string::npos);
  REQUIRE(read_bytes(dir.file("pd.svg.dat")).find("contour lines at log10 of the levels") != std::string::npos);
}

TEST_CASE("phase-diagram of a train-sweep: lr on a log axis, warmup in cells, converged_fraction by default", "[quick]") {
  TempDir dir;
  PlotOptions o = options(write_json(dir, "ts.json", train_sweep_report({"post"}, {6}, {0, 10, 100}, {1e-3, 1e-2})),
                          dir.file("pd.svg"));
  o.render = false;
  make_plot(o, "test");
  const std::string data = read_bytes(dir.file("pd.svg.dat"));
  REQUIRE(data.find("converged_fraction") != std::string::npos);
  REQUIRE(data.find("x = log10 lr, y = warmup (index)") != std::string::npos);  // 0, 10, 100: not geometric, not even
  const auto b = blocks(data);
  // lr 1e-3: all converged (1); lr 1e-2: warmup 0 none (0), warmup 10 and 100 half (0.5)
  REQUIRE(b[0].size() == 6);
  REQUIRE(b[0][0].substr(b[0][0].rfind(' ') + 1) == "1");
  REQUIRE(b[0][3].substr(b[0][3].rfind(' ') + 1) == "0");
  REQUIRE(b[0][4].substr(b[0][4].rfind(' ') + 1) == "0.5");
}

TEST_CASE("phase-diagram refuses what it cannot draw with one line naming the fix", "[quick]") {
  TempDir dir;
  PlotOptions o = options(write_json(dir, "s2.json", sweep2d_report()), dir.file("pd.svg"));
  o.render = false;
  const auto one_line = [&](const std::string& expect) {
    const std::string e = error_of([&] { make_plot(o, ""); });
    INFO(e);
    REQUIRE(e.find(expect) != std::string::npos);
    REQUIRE(e.find("fix:") != std::string::npos);
    REQUIRE(e.find('\n') == std::string::npos);
  };
  o.metric = "top.token_geometry.mean_cosinus";
  one_line("metric 'top.token_geometry.mean_cosinus' is not in");
  o.metric = "signed";  // values <= 0 on a log colour scale
  o.logy = "on";
  one_line("--logy on: metric 'signed' has values <= 0");
  o.logy = "off";
  o.levels = {-1};
  REQUIRE_NOTHROW(make_plot(o, ""));  // a level outside the values draws no line
  o.levels.clear();
  o.metric.clear();
  o.inputs = {write_json(dir, "s1.json", sweep_report(false))};
  one_line("sweeps only --param init-scale");
  o.inputs = {write_json(dir, "a.json", analyze_report("post", 3, 1.0, 0.5))};
  one_line("phase-diagram reads one report of a 2-D sweep");
  o.inputs = {write_json(dir, "t.json", train_report("post", 2))};
  one_line("not the train report");
}

TEST_CASE("phase-diagram (issue 38): shares of runs on [0, 1] in words (an all-zero grid too), the colour bar's tics "
          "and the contour labels in one format, no two contour labels on one spot", "[quick]") {
  TempDir dir;
  J ts = train_sweep_report({"post"}, {6}, {0, 10, 100}, {1e-3, 1e-2});
  for (auto& c : ts["groups"][0]["cells"]) c["converged"] = 0;  // nothing converged anywhere
  PlotOptions o = options(write_json(dir, "ts.json", ts), dir.file("pd.svg"));
  o.render = false;
  make_plot(o, "test");
  std::string script = read_bytes(dir.file("pd.svg.gp"));
  REQUIRE(script.find("set cbrange [0:1]") != std::string::npos);  // not -0.5:0.5 around the zeros
  REQUIRE(script.find("set cblabel 'share of runs converged'") != std::string::npos);

  // a sweep whose metric spans eight decades: the bar's tics are powers of ten, and so are the contour labels
  J s2 = sweep2d_report();
  int k = 0;
  for (auto& g : s2["groups"]) g["scalars"]["summary.bottom_to_top_grad_ratio"]["mean"] = std::pow(10.0, -8.0 * (k++ % 15) / 14);
  o = options(write_json(dir, "s2.json", s2), dir.file("pd.svg"));
  o.render = false;
  make_plot(o, "test");
  script = read_bytes(dir.file("pd.svg.gp"));
  REQUIRE(script.find("set format cb '10^{%L}'") != std::string::npos);
  const auto b = blocks(read_bytes(dir.file("pd.svg.dat")));
  std::vector<std::pair<double, double>> at;
  for (const auto& line : b.back()) {  // the contour labels: x y "text"
    INFO(line);
    REQUIRE(line.find("\"1e-") == std::string::npos);
    std::istringstream in(line);
    double x = 0, y = 0;
    in >> x >> y;
    at.emplace_back(x, y);
  }
  REQUIRE(at.size() >= 2);
  for (size_t i = 0; i < at.size(); ++i)
    for (size_t j = i + 1; j < at.size(); ++j) REQUIRE((at[i].first != at[j].first || at[i].second != at[j].second));
}
