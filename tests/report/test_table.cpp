// test_table.cpp — the terminal table's per-layer bars are log10 ||dL/dx_l|| on a fixed scale (issue 18, defect
// 7: they were scaled min to max, so a 2.3 % spread drew 24 against 1 '#').
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

#include "gradflow/report/table.hpp"
#include "gradflow/report/terminal.hpp"

using namespace gradflow;

namespace {

nlohmann::ordered_json report_with(const std::vector<double>& grads) {
  nlohmann::ordered_json r;
  r["config"] = {{"placement", "post"}, {"layers", grads.size()}, {"init", "torch"}, {"init_scale", "1"}, {"seed", 0}};
  r["layers"] = nlohmann::ordered_json::array();
  for (size_t l = 0; l < grads.size(); ++l)
    r["layers"].push_back({{"index", l}, {"grad_norm", grads[l]}, {"param_grad_norms", {{"linear2.weight", 1.0}}}});
  r["summary"] = nlohmann::ordered_json::object();
  return r;
}

// The '#' count of each layer row's bar.
std::vector<size_t> bar_lengths(const std::string& table) {
  std::vector<size_t> out;
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);) {
    if (line.find("linear2.weight") == std::string::npos) continue;
    const auto at = line.find_last_of(' ');
    const std::string bar = line.substr(at + 1);
    out.push_back(bar.find_first_not_of('#') == std::string::npos ? bar.size() : 0);
  }
  return out;
}

}  // namespace

TEST_CASE("table bars: nearly flat gradients draw equal bars, a 1/100 decay draws 8 '#' fewer", "[quick]") {
  std::ostringstream flat;
  print_report_table(flat, report_with({1.0, 1.01, 1.023}), true);
  REQUIRE(bar_lengths(flat.str()) == std::vector<size_t>{24, 24, 24});  // a 2.3 % spread is flat
  REQUIRE(flat.str().find("4 # per decade") != std::string::npos);    // the scale is printed
  std::ostringstream decay;
  print_report_table(decay, report_with({0.001, 0.01, 0.1}), true);
  REQUIRE(bar_lengths(decay.str()) == std::vector<size_t>{16, 20, 24});
  REQUIRE(log_bar(1e-7, 0.0) == "<");  // more than 6 decades below the largest
  REQUIRE(log_bar(0.0, 0.0) == "?");
  std::ostringstream none;
  print_report_table(none, report_with({1.0, 2.0}), false);
  REQUIRE(none.str().find('#') == std::string::npos);
}

TEST_CASE("the table's header names the weights file instead of an init scheme it did not use", "[quick]") {
  auto r = report_with({1.0, 2.0});
  std::ostringstream plain;
  print_report_table(plain, r, false);
  REQUIRE(plain.str().find("init torch x1") != std::string::npos);
  r["config"]["weights"] = "model.safetensors";
  std::ostringstream loaded;
  print_report_table(loaded, r, false);
  REQUIRE(loaded.str().find("weights model.safetensors") != std::string::npos);
  REQUIRE(loaded.str().find("init torch") == std::string::npos);
}

TEST_CASE("the /top column is in the table's scientific format, however extreme the ratio", "[quick]") {
  std::ostringstream out;
  print_report_table(out, report_with({1e300, 1.0}), false);
  REQUIRE(out.str().find("1.0000e+300") != std::string::npos);  // ||dL/dx_0|| / ||dL/dx_top||, not 301 digits
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) REQUIRE(line.size() < 160);
}

namespace {
size_t shown_chars(const std::string& line) {
  size_t n = 0;
  for (unsigned char c : line) n += (c & 0xC0) != 0x80;
  return n;
}
}  // namespace

TEST_CASE("a narrow table (issue 38, --narrow for a projector): no line over 80 characters, shorter bars on the "
          "same scale", "[quick]") {
  auto r = report_with({0.001, 0.01, 0.1});
  r["config"]["d_model"] = 512;
  r["config"]["d_ff"] = 2048;
  r["config"]["seq_len"] = 128;
  for (auto& l : r["layers"]) l["block_jacobian"] = {{"spectral_norm", 1.5}}, l["product_jacobian"] = {{"spectral_norm", 2.0}, {"min_singular_value", 0.1}};
  r["summary"] = {{"bottom_to_top_grad_ratio", 0.01}, {"grad_growth_rate_per_layer", -2.3}, {"grad_growth_factor_per_layer", 0.1}};
  std::ostringstream wide, narrow;
  print_report_table(wide, r, true, false);
  print_report_table(narrow, r, true, true);
  std::istringstream in(narrow.str());
  size_t lines = 0, longest = 0;
  std::vector<size_t> bars;
  for (std::string line; std::getline(in, line); ++lines) {
    longest = std::max(longest, shown_chars(line));
    const auto at = line.find_last_of(' ');
    if (line.find("e-0") != std::string::npos && at != std::string::npos && line.substr(at + 1).find_first_not_of('#') == std::string::npos)
      bars.push_back(line.size() - at - 1);
  }
  INFO(narrow.str());
  REQUIRE(longest <= kNarrowColumns);
  REQUIRE(bars == std::vector<size_t>{8, 10, 12});  // 2 '#' a decade, the longest 12
  REQUIRE(narrow.str().find("smin(P_l)") == std::string::npos);  // the third Jacobian column left out
  REQUIRE(narrow.str().find("||P_l||_2") != std::string::npos);
  REQUIRE(narrow.str().find("\n    ") != std::string::npos);  // the long prose lines wrapped, indented
  REQUIRE(wide.str().find("smin(P_l)") != std::string::npos);  // the default keeps every column
  size_t wide_longest = 0;
  std::istringstream w(wide.str());
  for (std::string line; std::getline(w, line);) wide_longest = std::max(wide_longest, shown_chars(line));
  REQUIRE(wide_longest > kNarrowColumns);
}

TEST_CASE("wrap_lines: long lines broken at their last fitting space, short ones and unbreakable ones kept", "[quick]") {
  REQUIRE(wrap_lines("short\n", 80) == "short\n");
  REQUIRE(wrap_lines("aaa bbb ccc\n", 7) == "aaa bbb\n    ccc\n");
  REQUIRE(wrap_lines("aaaaaaaaaa\n", 4) == "aaaaaaaaaa\n");  // no space to break at
  REQUIRE(wrap_lines("±± ±±", 2) == "±±\n    ±±");        // characters, not bytes
  REQUIRE(wrap_lines("no newline at the end", 10) == "no newline\n    at the\n    end");
}
