// test_figure_forms.cpp — the form a figure takes at real sizes (issue 18), checked on the gnuplot script and data
// gradflow writes (no rendering needed): legends below the axes instead of over the data, two-way styles (colour
// by one factor, marker and dash by another), small multiples for many lines, train and eval curves told apart,
// step 0 kept on a log step axis, tics at swept values, claims panels that read the claim recorded in the report.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "gradflow/plot/kinds.hpp"
#include "gradflow/plot/series.hpp"
#include "gradflow/plot/style.hpp"
#include "plot/plot_fixtures.hpp"

using namespace gradflow;
using namespace gradflow::test;

namespace {

struct Written {
  std::string script, data;
  RenderedFiles files;
};

Written figure(const TempDir& dir, const std::string& kind, const std::vector<std::string>& inputs, PlotOptions o = {}) {
  o.kind = kind;
  o.inputs = inputs;
  o.output = dir.file(kind + ".svg");
  o.render = false;
  Written w;
  w.files = make_plot(o, "test");
  w.script = read_bytes(dir.file(kind + ".svg.gp"));
  w.data = read_bytes(dir.file(kind + ".svg.dat"));
  return w;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// The plot elements (lines after `plot \`) that draw data, each "using ... with ... <style> title|notitle".
std::vector<std::string> data_elements(const std::string& script) {
  std::vector<std::string> out;
  std::istringstream in(script);
  for (std::string line; std::getline(in, line);)
    if (line.find("data index") != std::string::npos && line.find("filledcurves") == std::string::npos) out.push_back(line);
  return out;
}

// The style part of an element: from "with" to "title"/"notitle".
std::string style_of(const std::string& element) {
  const auto w = element.find(" with ");
  auto t = element.find(" title ");
  if (t == std::string::npos) t = element.find(" notitle");
  return element.substr(w, t - w);
}

}  // namespace

TEST_CASE("no two of the first 64 series styles look alike, the first 8 are the palette", "[quick]") {
  std::set<std::string> seen;
  for (int k = 0; k < 64; ++k) seen.insert(series_style(k));
  REQUIRE(seen.size() == 64);
  REQUIRE(series_style(0) == "lt 1");
  REQUIRE(series_style(7) == "lt 8");
  REQUIRE(series_style(8).find("lt 1 pt ") == 0);  // colour 1 again, with another marker
  REQUIRE(series_style(8).find("pt 7") == std::string::npos);
}

TEST_CASE("grad-by-depth of a 3 x 3 compare: colour by placement, marker and dash by depth, legend below", "[quick]") {
  TempDir dir;
  const std::string cmp = write_json(dir, "cmp.json", compare_report({"post", "pre", "sandwich"}, {6, 12, 24}));
  const Written w = figure(dir, "grad-by-depth", {cmp});
  REQUIRE(w.script.find("set key below center noopaque maxrows 3") != std::string::npos);  // not over the data:
  // placements in the first column, depths in the second
  const auto lines = data_elements(w.script);
  REQUIRE(lines.size() == 9);
  for (const auto& l : lines) REQUIRE(l.find("notitle") != std::string::npos);  // 6 legend entries, not 9
  // colour (lt) by placement, pt/dt by depth: post L=6 and post L=12 share lt 1, differ in pt
  REQUIRE(style_of(lines[0]).find("lt 1 pt 7 dt 1") != std::string::npos);
  REQUIRE(style_of(lines[1]).find("lt 1 pt 5 dt 2") != std::string::npos);
  REQUIRE(style_of(lines[3]).find("lt 2 pt 7 dt 1") != std::string::npos);
  REQUIRE(count(w.script, "keyentry") == 6);
  for (const char* t : {"title 'Post-LN'", "title 'Pre-LN'", "title 'Sandwich-LN'", "title 'L=6'", "title 'L=12'", "title 'L=24'"})
    REQUIRE(w.script.find(t) != std::string::npos);
}

TEST_CASE("jacobian-norms of many groups: one panel per quantity, the layers not hidden by a legend", "[quick]") {
  TempDir dir;
  const std::string cmp = write_json(dir, "cmp.json", compare_report({"post", "pre", "sandwich"}, {6, 12, 24}));
  const Written w = figure(dir, "jacobian-norms", {cmp});
  REQUIRE(w.script.find("set multiplot") != std::string::npos);
  REQUIRE(count(w.script, "set ylabel") == 3);        // ‖B_l‖₂, ‖P_l‖₂, σ_min(P_l)
  REQUIRE(count(w.script, "unset key") == 3);         // the panels carry no legend of their own
  REQUIRE(count(w.script, "keyentry") == 6);          // one shared two-way legend: 3 placements, 3 depths
  REQUIRE(w.script.find("set key top") == std::string::npos);  // no legend inside a panel, over its lines
}

TEST_CASE("styles do not repeat after 8 series: 12 analyze reports in one grad-by-depth figure", "[quick]") {
  TempDir dir;
  std::vector<std::string> in;
  for (int k = 0; k < 12; ++k) {
    J r = analyze_report("post", 4, 1.0, 0.9);
    r["config"]["seed"] = k;
    in.push_back(write_json(dir, "r" + std::to_string(k) + ".json", r));
  }
  const Written w = figure(dir, "grad-by-depth", in);
  std::set<std::string> styles;
  for (const auto& l : data_elements(w.script)) styles.insert(style_of(l));
  REQUIRE(styles.size() == 12);
  REQUIRE(w.script.find("set key below") != std::string::npos);  // 12 entries: below the axes, in columns
}

TEST_CASE("loss-curves: eval solid with markers and train dashed for every report, legend samples show it", "[quick]") {
  TempDir dir;
  const std::string a = write_json(dir, "a.json", train_report("post", 3));
  const std::string b = write_json(dir, "b.json", train_report("pre", 3));
  const Written w = figure(dir, "loss-curves", {a, b});
  const auto lines = data_elements(w.script);
  REQUIRE(lines.size() == 4);
  // the second report's eval curve is solid (it was dashed: style 2's own dash), its train curve dashed
  REQUIRE(lines[2].find("with linespoints lt 2 pt 7 dt 1") != std::string::npos);
  REQUIRE(lines[3].find("with lines lt 2 dt 2") != std::string::npos);
  REQUIRE(w.script.find("keyentry with lines lc rgb '#707070' dt 2 title 'train'") != std::string::npos);
  REQUIRE(w.script.find("keyentry with linespoints lc rgb '#707070' pt 7 dt 1 title 'eval'") != std::string::npos);
  REQUIRE(w.script.find("samplen 3.5") != std::string::npos);  // long enough for the dash to show
}

TEST_CASE("loss-curves --logx on keeps step 0, at a tic labelled 0", "[quick]") {
  TempDir dir;
  const std::string a = write_json(dir, "a.json", train_report("post", 3, 1000, 100));
  PlotOptions o;
  o.logx = "on";
  const Written w = figure(dir, "loss-curves", {a}, o);
  REQUIRE(w.script.find("set logscale x") != std::string::npos);
  // step 0 a quarter of the first logged step (100) to its left, tics from that step on
  REQUIRE(w.script.find("set xtics ('0' 25, '100' 100, '200' 200, '500' 500, '1000' 1000)") != std::string::npos);
  REQUIRE(w.data.find("# eval\n# x y\n25 ") != std::string::npos);       // the step-0 point is in the data
  REQUIRE(count(w.data, "\n25 ") == 2);                                   // eval and train
}

TEST_CASE("a 96-cell train-sweep: small multiples per placement and depth, a two-way legend of lr and warmup", "[quick]") {
  TempDir dir;
  const std::string sw = write_json(
      dir, "c6.json", train_sweep_report({"post", "pre", "sandwich"}, {6, 12}, {0, 25, 100, 400}, {1e-3, 3e-3, 1e-2, 3e-2}));
  PlotOptions o;
  o.width = 7;
  for (const char* kind : {"loss-curves", "grad-over-training"}) {
    INFO(kind);
    const Written w = figure(dir, kind, {sw}, o);
    REQUIRE(w.script.find("set multiplot") != std::string::npos);
    REQUIRE(count(w.script, "set title") == 6);  // post, L=6 ... sandwich, L=12
    REQUIRE(w.script.find("set title 'Sandwich-LN, L=12'") != std::string::npos);
    REQUIRE(count(w.script, "keyentry") == 8);   // 4 learning rates, 4 warmups: not 96 entries
    REQUIRE(w.script.find("title 'lr 0.03'") != std::string::npos);
    REQUIRE(w.script.find("title 'warmup 400'") != std::string::npos);
    REQUIRE(data_elements(w.script).size() == 96);
    // the same cell has the same style in every panel
    const auto lines = data_elements(w.script);
    REQUIRE(style_of(lines[0]) == style_of(lines[16]));
    REQUIRE(style_of(lines[0]) != style_of(lines[1]));
  }
}

TEST_CASE("sensitivity: tics at the swept values, inv-sqrt-2L named, category labels that collide rotated", "[quick]") {
  TempDir dir;
  J r = {{"experiment", "sweep"}, {"param", "init-scale"}};
  r["groups"] = J::array();
  const std::vector<std::pair<std::string, double>> values = {{"0.25", 0.25}, {"0.5", 0.5}, {"1", 1}, {"2", 2}, {"4", 4},
                                                               {"inv-sqrt-2L", 1 / std::sqrt(48.0)}};
  for (const auto& [v, x] : values) {
    J g = {{"placement", "post"}, {"layers", 24}, {"param", "init-scale"}, {"value", v}, {"x", x}};
    g["scalars"] = {{"summary.bottom_to_top_grad_ratio", stat(1 + x, 0.1)}};
    r["groups"].push_back(g);
  }
  const Written w = figure(dir, "sensitivity", {write_json(dir, "sw.json", r)});
  REQUIRE(w.script.find("set logscale x") != std::string::npos);
  for (const char* t : {"'0.25' 0.25", "'4' 4", "'1/√(2L)' 0.14433756729740"})
    REQUIRE(w.script.find(t) != std::string::npos);

  // a compare at one depth over eight placements: the placements are the tics; the legend would repeat them
  std::vector<std::string> many = {"post", "pre", "sandwich", "normformer", "sub-ln", "b2t", "admin", "deepnorm"};
  const Written c = figure(dir, "sensitivity", {write_json(dir, "c12.json", compare_report(many, {6}))});
  REQUIRE(c.script.find("rotate by 30 right") != std::string::npos);
  REQUIRE(c.script.find("unset key") != std::string::npos);
}

TEST_CASE("log axes: no more tics than fit, and no axis ending just short of a tic", "[quick]") {
  for (int max_tics : {3, 4, 8}) {
    INFO(max_tics);
    REQUIRE(count(log_axis("y", 1.5, 9, max_tics), ", '") + 1 <= static_cast<size_t>(max_tics));
    REQUIRE(count(log_axis("y", 2.2, 4.5, max_tics), ", '") + 1 <= static_cast<size_t>(max_tics));
  }
  // data from 0.203: the axis reaches down to the tic 0.2 (it ended at 0.2 without it)
  REQUIRE(log_axis("y", 0.203, 2.5, 5).find("set ytics ('0.2' 0.2") != std::string::npos);
  // many decades on a short axis: a tic every second decade (the labels touched)
  REQUIRE(log_axis("y", 1e-9, 1, 6).find("set ytics 100\n") != std::string::npos);
}

TEST_CASE("claims: the claim and plot recorded in the report decide the panel, train reports are skipped", "[quick]") {
  TempDir dir;
  // a report as `gradflow run` wrote it before spec carried the claim: only spec_file.content has it
  J old = compare_report({"post", "pre"}, {24});
  old["spec"] = {{"gradflow_spec", 1}, {"command", "compare"}, {"options", J::object()}};
  old["spec_file"] = {{"path", "examples/claims/c5_bottom_ratio_24.json"},
                      {"content", {{"gradflow_spec", 1}, {"claim", "C5"}, {"command", "compare"}}}};
  // a spec with its own "plot": a metric, a ratio panel and the article's value
  J own = compare_report({"post", "pre"}, {6, 12});
  own["spec"] = {{"claim", "mine"}, {"plot", {{"metric", "bottom.grad_norm"}, {"ratio", true}, {"article_value", 0.5}}}};
  const Written w = figure(dir, "claims",
                           {write_json(dir, "c5_bottom_ratio_24.json", old), write_json(dir, "own.json", own),
                            write_json(dir, "train.json", train_report("post", 2))});
  REQUIRE(w.script.find("set title 'C5: c5_bottom_ratio_24'") != std::string::npos);  // not the file name alone
  REQUIRE(count(w.script, "title 'Post-LN / Pre-LN'") == 2);   // both are ratio panels (Post/Pre), not bottom/top per placement
  REQUIRE(count(w.script, "title 'article'") == 2);
  REQUIRE(w.data.find("0.01\n") != std::string::npos);  // C5's dashed line at 1/100
  REQUIRE(w.data.find("0.5\n") != std::string::npos);   // the spec's own article value
  REQUIRE(w.files.skipped.size() == 1);
  REQUIRE(w.files.skipped[0].find("train.json (a train report") != std::string::npos);
  // legends never above a panel (they sat on the panel above): inside, or below the axes at a screen position
  REQUIRE(w.script.find("outside top") == std::string::npos);
}

TEST_CASE("spectrum legends write P_0 as a subscript, not raw", "[quick]") {
  TempDir dir;
  PlotOptions o;
  o.at = {0, 5};
  const Written w = figure(dir, "spectrum", {write_json(dir, "post.json", analyze_report("post", 6, 1.0, 0.7))}, o);
  REQUIRE(w.script.find("title '{/:Italic P}_{0}'") != std::string::npos);
  REQUIRE(w.script.find("title 'P_0'") == std::string::npos);
}

TEST_CASE("claims (issue 38): a placement keeps its style in every panel, a reduced run says so, error bars are "
          "solid") {
  TempDir dir;
  J a = compare_report({"post", "pre"}, {2, 4}), b = compare_report({"pre", "post"}, {2, 4});
  a["spec"] = {{"claim", "C8"}, {"options", {{"layers", "2,4"}}}};  // C8: the groups themselves, no ratio
  b["spec"] = a["spec"];
  // b is the --reduced run of a spec whose full size is 6,12,24
  b["spec_file"] = {{"path", "x.json"}, {"content", {{"claim", "C8"}, {"options", {{"layers", "6,12,24"}}},
                                                     {"reduced", {{"layers", "2,4"}}}}}};
  const Written w = figure(dir, "claims", {write_json(dir, "a.json", a), write_json(dir, "b.json", b)});
  std::map<std::string, std::set<std::string>> styles;  // title -> the styles it is drawn with
  for (const auto& e : data_elements(w.script)) {
    const auto t = e.find(" title '");
    if (t == std::string::npos) continue;
    styles[e.substr(t + 8, e.find('\'', t + 8) - t - 8)].insert(style_of(e));
  }
  REQUIRE(styles.count("Post-LN"));
  REQUIRE(styles.count("Pre-LN"));
  for (const auto& [title, set] : styles) {
    INFO(title);
    REQUIRE(set.size() == 1);  // Post-LN blue in both panels, though b lists pre first
  }
  REQUIRE(*styles["Post-LN"].begin() != *styles["Pre-LN"].begin());
  REQUIRE(w.script.find("b, reduced run") != std::string::npos);
  REQUIRE(w.script.find("a, reduced run") == std::string::npos);
  for (const auto& e : data_elements(w.script))  // bars solid (dt 1) in the series' colour; never yerrorlines
    if (e.find("yerrorbars") != std::string::npos) REQUIRE(e.find(" dt 1 ") != std::string::npos);
  REQUIRE(w.script.find("yerrorlines") == std::string::npos);
}

TEST_CASE("sensitivity (issue 38): a line runs along x, whatever order the sweep lists its values in") {
  TempDir dir;
  J r = sweep_report(false);
  // inv-sqrt-2L last in the list, though its x (0.35 at L = 4) is the smallest
  J inv = r["groups"][0];
  inv["value"] = "inv-sqrt-2L";
  inv["x"] = 0.35355339059327373;
  r["groups"].push_back(inv);
  const Written w = figure(dir, "sensitivity", {write_json(dir, "s.json", r)});
  std::istringstream data(w.data);
  double last = -INFINITY;
  for (std::string line; std::getline(data, line);) {
    if (line.empty()) { last = -INFINITY; continue; }  // a new block
    if (line[0] == '#') continue;
    const double x = std::stod(line.substr(0, line.find(' ')));
    REQUIRE(x > last);
    last = x;
  }
}

TEST_CASE("a 2-D sweep of many groups is refused by the line kinds, pointing to phase-diagram") {
  TempDir dir;
  const std::string in = write_json(dir, "s2.json", sweep2d_report());  // 2 placements x 5 x 3 = 30 groups
  for (const std::string kind : {"grad-by-depth", "sensitivity"}) {
    PlotOptions o;
    o.kind = kind;
    o.inputs = {in};
    o.output = dir.file("x.svg");
    o.render = false;
    const std::string e = error_of([&] { make_plot(o, "test"); });
    INFO(e);
    REQUIRE(e.find("2-D sweep of 30 groups") != std::string::npos);
    REQUIRE(e.find("fix: --kind phase-diagram") != std::string::npos);
  }
}

TEST_CASE("grad-over-training of train reports, --metric bottom_to_top_grad_ratio: a line per run (issue 38's "
          "teaching path)") {
  TempDir dir;
  J a = train_report("post", 4), b = train_report("pre", 4);
  for (auto& e : a["log"]) e["bottom_to_top_grad_ratio"] = 1e-3 * (1 + e["step"].get<double>());
  PlotOptions o;
  o.metric = "bottom_to_top_grad_ratio";
  const Written w = figure(dir, "grad-over-training", {write_json(dir, "a.json", a), write_json(dir, "b.json", b)}, o);
  REQUIRE(data_elements(w.script).size() == 2);  // one line per run, not one per layer
  INFO(w.data);
  REQUIRE(w.data.find("# Post-LN\n# x y\n0 0.001\n10 0.01") != std::string::npos);
  REQUIRE(w.script.find("set ylabel '‖∂{/:Italic L}/∂{/:Italic x}_0‖ / ‖∂") != std::string::npos);
  o.metric = "eval_loss";
  const std::string e = error_of([&] { figure(dir, "grad-over-training", {write_json(dir, "a.json", a)}, o); });
  REQUIRE(e.find("fix: --metric bottom_to_top_grad_ratio or no --metric") != std::string::npos);
}

TEST_CASE("the --title of a figure (issue 38): a long title is wrapped to the width, a multi-panel figure shows it above its panels") {
  TempDir dir;
  const std::string cmp = write_json(dir, "cmp.json", compare_report({"post", "pre", "sandwich"}, {6, 12, 24}));
  const std::string long_title =
      "Gradient norms of every layer for Post-LN, Pre-LN and Sandwich-LN at 6, 12 and 24 layers, seed 0, d = 8";
  PlotOptions o;
  o.title = long_title;
  o.width = 3.5;
  const Written one = figure(dir, "grad-by-depth", {cmp}, o);  // one panel: gnuplot's own title, wrapped
  INFO(one.script);
  REQUIRE(count(one.script, "set title 'Gradient norms") == 1);
  REQUIRE(one.script.find(".\"\\n\".'") != std::string::npos);  // at least two lines
  for (const auto& line : title_lines(long_title, 3.5)) REQUIRE(line.size() <= 48);
  REQUIRE(title_lines(long_title, 3.5).size() >= 2);
  REQUIRE(title_lines("short", 3.5) == std::vector<std::string>{"short"});
  const Written many = figure(dir, "jacobian-norms", {cmp}, o);  // three panels: the title was dropped before
  INFO(many.script);
  REQUIRE(many.script.find("set multiplot title 'Gradient norms") != std::string::npos);
  REQUIRE(count(many.script, "set title 'Gradient norms") == 0);  // not repeated over each panel
}

TEST_CASE("claims panels that show their claim (issue 38): per-layer profiles, several metrics, Lemma 2's bounds, "
          "colour by placement in every panel") {
  TempDir dir;
  // a sweep over a flag, drawn against layer l: colour by placement, marker and dash by the flag
  J c11 = compare_report({"post", "pre"}, {6});
  c11["experiment"] = "sweep";
  c11["param"] = "no-final-norm";
  J groups = J::array();
  for (const char* v : {"false", "true"})
    for (J g : c11["groups"]) {
      g["param"] = "no-final-norm";
      g["value"] = v;
      groups.push_back(g);
    }
  c11["groups"] = groups;
  c11["spec"] = {{"claim", "C11"}, {"plot", {{"x", "layer"}, {"metric", "grad_norm"}}}};
  // two metrics against depth, named by their labels
  J est = compare_report({"post", "pre"}, {2, 4});
  est["spec"] = {{"claim", "C4 mechanism"},
                 {"plot", {{"metrics", {"summary.bottom_to_top_grad_ratio", "bottom.grad_norm"}},
                           {"labels", {"estimate", "product"}}, {"ylabel", "gain"}}}};
  // Lemma 2: activation_rms against l with the bounds
  J lemma = compare_report({"pre", "post"}, {6});
  for (auto& g : lemma["groups"])
    for (auto& l : g["per_layer"]) l["activation_rms"] = {{"mean", 1.0}, {"std", 0.1}, {"n", 2}};
  lemma["spec"] = {{"claim", "Xiong et al. 2020, Lemma 2"}, {"plot", {{"x", "layer"}, {"metric", "activation_rms"}}}};
  const Written w = figure(dir, "claims", {write_json(dir, "c11.json", c11), write_json(dir, "est.json", est),
                                           write_json(dir, "lemma.json", lemma)});
  INFO(w.script);
  REQUIRE(w.script.find("title 'Post-LN, with final norm'") != std::string::npos);
  REQUIRE(w.script.find("title 'Post-LN, no final norm'") != std::string::npos);
  REQUIRE(w.script.find("title 'Pre-LN, estimate'") != std::string::npos);
  REQUIRE(w.script.find("title 'Pre-LN, product'") != std::string::npos);
  REQUIRE(w.script.find("set ylabel 'gain' noenhanced") != std::string::npos);
  REQUIRE(w.script.find("set xlabel 'layer {/:Italic l}  ({/:Italic L} = 6)'") != std::string::npos);
  REQUIRE(count(w.script, "title 'Lemma 2 bounds, Pre-LN'") == 1);
  INFO(w.data);
  REQUIRE(w.data.find("5 1.870828") != std::string::npos);  // sqrt(1 + 5/2) at l = 5: the lower bound's last point
  REQUIRE(w.data.find("5 2.915475") != std::string::npos);  // sqrt(1 + 15/2): the upper bound's
  // a placement's colour (lt) is the same in every panel and in each of its lines
  std::map<std::string, std::set<std::string>> colours;
  const std::regex lt("lt ([0-9]+)");
  for (const auto& e : data_elements(w.script)) {
    const auto t = e.find(" title '");
    std::smatch m;
    const std::string style = style_of(e);
    if (t == std::string::npos || !std::regex_search(style, m, lt)) continue;
    const std::string title = e.substr(t + 8, e.find('\'', t + 8) - t - 8);
    colours[title.substr(0, title.find(','))].insert(m[1]);
  }
  REQUIRE(colours["Post-LN"].size() == 1);
  REQUIRE(colours["Pre-LN"].size() == 1);
  REQUIRE(colours["Post-LN"] != colours["Pre-LN"]);
}

TEST_CASE("a claims panel's title holds its whole claim in up to three lines, not cut after one (issue 38)") {
  TempDir dir;
  J r = compare_report({"post", "pre"}, {2, 4});
  r["spec"] = {{"claim", "C4 mechanism: per-layer estimate vs true product"}};
  // two panels side by side (3.5 in each): too narrow for the claim and the file name on one line
  const Written w = figure(dir, "claims", {write_json(dir, "per_layer_estimate_torch.json", r), write_json(dir, "b.json", r)});
  INFO(w.script);
  REQUIRE(w.script.find("set title 'C4 mechanism: per-layer'.\"\\n\".'estimate vs true product'") != std::string::npos);  // wrapped, whole
  REQUIRE(w.script.find("…") == std::string::npos);
  REQUIRE(w.script.find("(per_layer_estimate_torch)") != std::string::npos);
}
