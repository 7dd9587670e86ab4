// test_plan_spec.cpp — the plan's order and seed rule, list parsing, spec files and their command words.
#include <catch2/catch.hpp>
#include <set>

#include "gradflow/experiments/plan.hpp"
#include "gradflow/experiments/spec.hpp"
#include "io/temp_dir.hpp"

using namespace gradflow;
using Json = nlohmann::ordered_json;

namespace {
// --param layers (value) and --param2 d-model (value2)
PointConfig point(const std::string& p, Index depth, const std::string& value, const std::string& value2) {
  PointConfig pc;
  pc.rc.model.placement = p;
  pc.rc.model.layers = value.empty() ? depth : std::stoi(value);
  pc.x = static_cast<double>(pc.rc.model.layers);
  if (!value2.empty()) pc.rc.model.d_model = std::stoi(value2), pc.x2 = std::stod(value2);
  return pc;
}
}  // namespace

TEST_CASE("plan: placement-major groups, repetitions innermost, seed = base + r, unique file names") {
  PlanAxes axes;
  axes.placements = {"post", "pre"};
  axes.depths = {2, 4};
  axes.seeds = 3;
  axes.base_seed = 10;
  const auto c = plan_configurations(axes, point);
  REQUIRE(c.size() == 12);
  REQUIRE(c[0].placement == "post");
  REQUIRE(c[0].depth == 2);
  REQUIRE(c[3].depth == 4);
  REQUIRE(c[6].placement == "pre");
  REQUIRE(c[5].group == 1);
  for (const auto& k : c) REQUIRE(k.rc.init.seed == repetition_seed(10, k.repetition));
  REQUIRE(repetition_seed(10, 2) == 12);
  std::set<std::string> names;
  for (const auto& k : c) names.insert(k.file_name());
  REQUIRE(names.size() == c.size());
  REQUIRE(c[4].file_name() == "post_L4_s1.json");
}

TEST_CASE("plan: a swept layers value sets the depth, bad axes are refused") {
  PlanAxes axes;
  axes.placements = {"post"};
  axes.depths = {6};
  axes.param = "layers";
  axes.values = {"2", "8"};
  axes.seeds = 1;
  const auto c = plan_configurations(axes, point);
  REQUIRE(c.size() == 2);
  REQUIRE(c[1].depth == 8);
  REQUIRE(c[1].file_name() == "post_L8_8_s0.json");
  axes.seeds = 0;
  REQUIRE(test::error_of([&] { plan_configurations(axes, point); }).find("--seeds") != std::string::npos);
}

TEST_CASE("split_list trims items and refuses empty ones") {
  REQUIRE(split_list("post, pre ,sandwich", "--placements") == std::vector<std::string>{"post", "pre", "sandwich"});
  REQUIRE(test::error_of([] { split_list("6,,12", "--layers"); }).find("--layers") != std::string::npos);
  // a repeated item would run the same configurations twice (issue 13 item 11)
  const std::string twice = test::error_of([] { split_list("post,pre, post", "--placements"); });
  REQUIRE(twice.find("'post' twice") != std::string::npos);
  REQUIRE(twice.find("fix:") != std::string::npos);
}

TEST_CASE("spec_to_args: strings, numbers, lists, flags, reduced overrides") {
  const Json spec = Json::parse(R"({"gradflow_spec": 1, "command": "compare",
      "options": {"placements": "post,pre", "layers": [6, 12], "seeds": 5, "init-scale": 0.5,
                  "gradients-only": true, "causal": false},
      "reduced": {"layers": "2", "seeds": 2}})");
  check_spec(spec, "t");
  REQUIRE(spec_to_args(spec, false) == std::vector<std::string>{"compare", "--placements", "post,pre", "--layers",
                                                                 "6,12", "--seeds", "5", "--init-scale", "0.5",
                                                                 "--gradients-only"});
  const auto r = spec_to_args(spec, true);
  REQUIRE(r[4] == "2");
  REQUIRE(r[6] == "2");
}

TEST_CASE("load_spec names the file and the fix") {
  test::TempDir dir;
  test::write_bytes(dir.file("a.json"), R"({"gradflow_spec": 1, "command": "train"})");
  REQUIRE(test::error_of([&] { load_spec(dir.file("a.json")); }).find("\"command\"") != std::string::npos);
  test::write_bytes(dir.file("b.json"), R"({"gradflow_spec": 1, "command": "sweep", "options": {"--layers": 2}})");
  REQUIRE(test::error_of([&] { load_spec(dir.file("b.json")); }).find("dashes") != std::string::npos);
  test::write_bytes(dir.file("c.json"), "{not json");
  REQUIRE(test::error_of([&] { load_spec(dir.file("c.json")); }).find("not valid JSON") != std::string::npos);
  test::write_bytes(dir.file("d.json"), R"({"gradflow_spec": 1, "command": "sweep", "option": {}})");
  REQUIRE(test::error_of([&] { load_spec(dir.file("d.json")); }).find("unknown key") != std::string::npos);
  REQUIRE(test::error_of([&] { load_spec(dir.file("missing.json")); }).find("fix") != std::string::npos);
}

TEST_CASE("a spec's \"plot\" (what the claims figure draws) is accepted and checked") {
  const Json ok = Json::parse(R"({"gradflow_spec": 1, "command": "compare", "claim": "C5",
      "plot": {"metric": "bottom.grad_norm", "ratio": true, "article_value": 0.01}})");
  REQUIRE_NOTHROW(check_spec(ok, "t"));  // it was refused: unknown key "plot" (issue 18)
  Json bad = ok;
  bad["plot"] = {{"metrc", "x"}};
  REQUIRE(test::error_of([&] { check_spec(bad, "t"); }).find("\"metrc\" is unknown") != std::string::npos);
  bad["plot"] = {{"article_value", "0.01"}};
  REQUIRE(test::error_of([&] { check_spec(bad, "t"); }).find("wrong type") != std::string::npos);
  bad["plot"] = "bottom.grad_norm";
  REQUIRE(test::error_of([&] { check_spec(bad, "t"); }).find("must be an object") != std::string::npos);
  // issue 38: several metrics with their labels, and per-layer panels
  Json more = ok;
  more["plot"] = Json::parse(R"({"metrics": ["a", "b"], "labels": ["estimate", "product"], "ylabel": "gain", "x": "layer"})");
  REQUIRE_NOTHROW(check_spec(more, "t"));
  more["plot"]["x"] = "width";
  REQUIRE(test::error_of([&] { check_spec(more, "t"); }).find("\"x\" has the wrong type or value") != std::string::npos);
  more["plot"]["x"] = "depth";
  more["plot"]["labels"] = Json::array({"estimate"});
  REQUIRE(test::error_of([&] { check_spec(more, "t"); }).find("names the \"metrics\", one each") != std::string::npos);
  more["plot"]["metrics"] = Json::array({"a", 1});
  REQUIRE(test::error_of([&] { check_spec(more, "t"); }).find("\"metrics\" has the wrong type") != std::string::npos);
}

TEST_CASE("plan: a 2-D sweep runs every value with every value2, value2 inner, each with its own file") {
  PlanAxes axes;
  axes.placements = {"post", "pre"};
  axes.depths = {6};
  axes.param = "layers";
  axes.values = {"2", "4", "8"};
  axes.param2 = "d-model";
  axes.values2 = {"8", "16"};
  axes.seeds = 2;
  const auto c = plan_configurations(axes, point);
  REQUIRE(c.size() == 2 * 3 * 2 * 2);
  REQUIRE(c[0].value == "2");
  REQUIRE(c[0].value2 == "8");
  REQUIRE(c[2].value == "2");  // repetitions innermost, then value2
  REQUIRE(c[2].value2 == "16");
  REQUIRE(c[2].group == 1);
  REQUIRE(c[2].rc.model.d_model == 16);
  REQUIRE(c[2].x2 == 16.0);
  REQUIRE(c[4].value == "4");
  REQUIRE(c[4].depth == 4);
  REQUIRE(c[12].placement == "pre");
  REQUIRE(c[12].group == 6);
  REQUIRE(c[3].file_name() == "post_L2_2_16_s1.json");
  std::set<std::string> names;
  for (const auto& k : c) names.insert(k.file_name());
  REQUIRE(names.size() == c.size());
  // the second axis needs its values and must differ from the first
  axes.values2.clear();
  REQUIRE(test::error_of([&] { plan_configurations(axes, point); }).find("--values2") != std::string::npos);
  axes.values2 = {"8"};
  axes.param2 = "layers";
  REQUIRE(test::error_of([&] { plan_configurations(axes, point); }).find("is --param too") != std::string::npos);
}

TEST_CASE("plan: values that would share a result file are refused, naming both") {
  PlanAxes axes;
  axes.placements = {"post"};
  axes.depths = {2};
  axes.param = "init";
  axes.values = {"a/b", "a-b"};
  axes.seeds = 1;
  const auto any = [](const std::string& p, Index d, const std::string&, const std::string&) {
    PointConfig pc;
    pc.rc.model.placement = p;
    pc.rc.model.layers = d;
    return pc;
  };
  const std::string e = test::error_of([&] { plan_configurations(axes, any); });
  REQUIRE(e.find("(a/b) and (a-b)") != std::string::npos);
  REQUIRE(e.find("post_L2_a-b_s0.json") != std::string::npos);
  REQUIRE(e.find("fix:") != std::string::npos);
}
