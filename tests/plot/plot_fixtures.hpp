// plot_fixtures.hpp — test inputs for gradflow plot (reports shaped like analyze's and compare/sweep's, small
// and synthetic so the tests need no model run) and checks of the figure files: PDF header and page count,
// SVG well-formed XML (a small checker: tags balanced, attributes quoted), PNG size from the IHDR chunk.
#pragma once
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "gradflow/plot/gnuplot.hpp"
#include "io/temp_dir.hpp"

namespace gradflow::test {

using J = nlohmann::ordered_json;

// An analyze report of L layers: ||dL/dx_l|| = g0·rate^(L-1-l), spectra of size m.
inline J analyze_report(const std::string& placement, int L, double g0, double rate, int m = 8) {
  J r;
  r["config"] = {{"placement", placement}, {"layers", L}, {"d_model", 4}, {"seq_len", 2}, {"seed", 0}};
  r["layers"] = J::array();
  for (int l = 0; l < L; ++l) {
    const double g = g0 * std::pow(rate, L - 1 - l);
    J sv = J::array();
    for (int i = 0; i < m; ++i) sv.push_back(2.0 * std::pow(0.5, i) * (l + 1));
    sv.push_back(0.0);  // an exact zero (LayerNorm's invisible direction): left out on the log axis
    J layer = {{"index", l}, {"grad_norm", g}, {"param_grad_norms", {{"linear2.weight", 2 * g}, {"norm1.weight", g / 2}}}};
    layer["block_jacobian"] = {{"spectral_norm", 1.5}, {"spectrum", {{"singular_values", sv}}}};
    layer["product_jacobian"] = {{"spectral_norm", 3.0 - 0.1 * l}, {"min_singular_value", 1e-3 * (l + 1)},
                                 {"spectrum", {{"singular_values", sv}}}};
    r["layers"].push_back(layer);
  }
  r["summary"] = {{"bottom_to_top_grad_ratio", std::pow(rate, -(L - 1))}};
  return r;
}

inline J stat(double mean, double sd) { return {{"mean", mean}, {"std", sd}, {"n", 3}}; }

// A compare report: placements × depths, per-layer grad_norm and Jacobian norms, scalar metrics.
inline J compare_report(const std::vector<std::string>& placements, const std::vector<int>& depths) {
  J r = {{"experiment", "compare"}, {"spec", {{"claim", "C5"}}}};  // C5's panel: the ratio Post/Pre, article 1/100
  r["groups"] = J::array();
  for (const auto& p : placements)
    for (int L : depths) {
      const double rate = p == "post" ? 0.8 : 1.0;
      J g = {{"placement", p}, {"layers", L}, {"config", {{"placement", p}, {"layers", L}}}};
      g["per_layer"] = J::array();
      for (int l = 0; l < L; ++l) {
        const double m = std::pow(rate, L - 1 - l);
        g["per_layer"].push_back({{"index", l}, {"grad_norm", stat(m, 0.2 * m)}, {"block_jacobian.spectral_norm", stat(1.5, 0.1)},
                                  {"product_jacobian.spectral_norm", stat(3.0, 0.2)},
                                  {"product_jacobian.min_singular_value", stat(1e-3, 2e-3)}});  // std > mean: band clipped
      }
      g["scalars"] = {{"summary.bottom_to_top_grad_ratio", stat(std::pow(rate, L - 1), 0.05)},
                      {"bottom.grad_norm", stat(std::pow(rate, L - 1), 0.05)}};
      r["groups"].push_back(g);
    }
  r["ratios"] = J::array();
  for (int L : depths)
    r["ratios"].push_back({{"numerator", "post"}, {"denominator", "pre"}, {"layers", L},
                           {"metrics", {{"bottom.grad_norm", stat(std::pow(0.8, L - 1), 0.02)}}}});
  return r;
}

// A sweep report over init-scale, one value not numeric (x null) when `categorical`.
inline J sweep_report(bool categorical) {
  J r = {{"experiment", "sweep"}, {"param", "init-scale"}, {"values", {"1", "0.5", "0.1"}}};
  r["groups"] = J::array();
  const double xs[] = {1, 0.5, 0.1};
  for (const char* p : {"post", "pre"})
    for (int k = 0; k < 3; ++k) {
      J g = {{"placement", p}, {"layers", 6}, {"param", "init-scale"}, {"value", std::to_string(k)}};
      g["x"] = categorical && k == 1 ? J() : J(xs[k]);
      g["scalars"] = {{"summary.bottom_to_top_grad_ratio", stat(0.5 + xs[k], 0.1)}};
      g["per_layer"] = J::array();
      r["groups"].push_back(g);
    }
  return r;
}

// A 2-D sweep report: init-scale C in {0.25, 0.5, 1, 2, 4} across, layers L in {2, 4, 8} up, post and pre; the
// metric top.token_geometry.mean_cosine = 1 - exp(-C·L/4)/2 (post) or 1 - exp(-C·L/16)/2 (pre), a ratio that spans
// decades (10^(C-1)) and a metric with negative values ("signed", C - 1).
inline J sweep2d_report() {
  J r = {{"experiment", "sweep"}, {"param", "init-scale"}, {"values", {"0.25", "0.5", "1", "2", "4"}},
         {"param2", "layers"}, {"values2", {"2", "4", "8"}}};
  r["groups"] = J::array();
  for (const char* p : {"post", "pre"})
    for (double C : {0.25, 0.5, 1.0, 2.0, 4.0})
      for (int L : {2, 4, 8}) {
        char v[16];
        std::snprintf(v, sizeof v, "%g", C);
        J g = {{"placement", p}, {"layers", L}, {"param", "init-scale"}, {"value", v}, {"x", C},
               {"param2", "layers"}, {"value2", std::to_string(L)}, {"x2", double(L)}};
        const double cosine = 1 - std::exp(-C * L / (std::string(p) == "post" ? 4.0 : 16.0)) / 2;
        g["scalars"] = {{"top.token_geometry.mean_cosine", stat(cosine, 0.01)},
                        {"summary.bottom_to_top_grad_ratio", stat(std::pow(10.0, C - 1), 0.1)},
                        {"signed", stat(C - 1, 0.1)}};
        g["per_layer"] = J::array();
        r["groups"].push_back(g);
      }
  return r;
}

// A train report (docs/training.md): log every `every` steps up to `steps`, L layers.
inline J train_report(const std::string& placement, int L, int steps = 100, int every = 10) {
  J r = {{"config", {{"placement", placement}, {"layers", L}}}, {"task", {{"name", "copy"}}}};
  r["log"] = J::array();
  for (int s = 0; s <= steps; s += every) {
    J e = {{"step", s}, {"train_loss", 2.0 / (1 + 0.01 * s)}, {"eval_loss", 2.1 / (1 + 0.01 * s)},
           {"bottom_to_top_grad_ratio", 0.5}};
    e["layers"] = J::array();
    for (int l = 0; l < L; ++l) e["layers"].push_back({{"grad_norm", (l + 1) * 0.1 * (1 + 0.001 * s)}});
    r["log"].push_back(e);
  }
  return r;
}

// A train-sweep report: placements × depths × warmups × lrs cells (one seed), curves logged every 10 of 50 steps.
inline J train_sweep_report(const std::vector<std::string>& placements, const std::vector<int>& depths,
                            const std::vector<int>& warmups, const std::vector<double>& lrs) {
  J r = {{"grid", {{"placements", placements}, {"layers", depths}, {"warmup", warmups}, {"lr", lrs}, {"seeds", 1}}},
         {"spec", {{"claim", "C6"}}}};
  r["groups"] = J::array();
  r["runs"] = J::array();
  for (const auto& p : placements)
    for (int L : depths) {
      J g = {{"placement", p}, {"layers", L}, {"cells", J::array()}};
      for (double lr : lrs)
        for (int w : warmups) {
          J curve = J::array(), mean = J::array();
          for (int s = 0; s <= 50; s += 10) {
            const double loss = 2.0 / (1 + lr * s * (1 + 0.01 * w));
            mean.push_back({s, loss});
            curve.push_back({{"step", s}, {"eval_loss", loss}, {"bottom_to_top_grad_ratio", 0.5 + lr * s},
                             {"grad_norms", J::array()}});
          }
          g["cells"].push_back({{"lr", lr}, {"warmup", w}, {"runs", 2}, {"converged", lr < 5e-3 ? 2 : w > 0 ? 1 : 0},
                                {"divergence_rate", lr > 5e-3 ? 0.5 : 0.0}, {"mean_eval_curve", mean}});
          r["runs"].push_back({{"placement", p}, {"layers", L}, {"warmup", w}, {"lr", lr}, {"seed", 0}, {"curve", curve}});
        }
      r["groups"].push_back(g);
    }
  return r;
}

inline std::string write_json(const TempDir& dir, const std::string& name, const J& j) {
  const std::string p = dir.file(name);
  write_bytes(p, j.dump(1));
  return p;
}

// Number of pages in a PDF written by cairo (page objects are plain "/Type /Page" dictionaries).
inline int pdf_pages(const std::string& bytes) {
  int n = 0;
  for (size_t at = bytes.find("/Type /Page"); at != std::string::npos; at = bytes.find("/Type /Page", at + 1))
    if (bytes.compare(at, 12, "/Type /Pages") != 0) ++n;
  return n;
}

// PNG width and height from the IHDR chunk (bytes 16..23, big endian); {0, 0} when not a PNG.
inline std::pair<uint32_t, uint32_t> png_size(const std::string& b) {
  if (b.size() < 24 || b.compare(0, 8, std::string("\x89PNG\r\n\x1a\n", 8)) != 0 || b.compare(12, 4, "IHDR") != 0) return {0, 0};
  auto be = [&](size_t i) {
    return (uint32_t(uint8_t(b[i])) << 24) | (uint32_t(uint8_t(b[i + 1])) << 16) | (uint32_t(uint8_t(b[i + 2])) << 8) |
           uint32_t(uint8_t(b[i + 3]));
  };
  return {be(16), be(20)};
}

// "" when `s` is well-formed XML as far as tags go (declaration, comments, CDATA, doctype, nested elements with
// quoted attributes, one root), else what is wrong.
inline std::string xml_problem(const std::string& s) {
  std::vector<std::string> open;
  int roots = 0;
  size_t i = 0;
  while ((i = s.find('<', i)) != std::string::npos) {
    if (s.compare(i, 4, "<!--") == 0) { i = s.find("-->", i); if (i == std::string::npos) return "unclosed comment"; continue; }
    if (s.compare(i, 9, "<![CDATA[") == 0) { i = s.find("]]>", i); if (i == std::string::npos) return "unclosed CDATA"; continue; }
    if (s.compare(i, 2, "<?") == 0) { i = s.find("?>", i); if (i == std::string::npos) return "unclosed <?"; continue; }
    if (s.compare(i, 2, "<!") == 0) { i = s.find('>', i); if (i == std::string::npos) return "unclosed <!"; continue; }
    const bool closing = s[i + 1] == '/';
    size_t j = i + 1 + closing;
    size_t k = j;
    while (k < s.size() && !std::isspace(static_cast<unsigned char>(s[k])) && s[k] != '>' && s[k] != '/') ++k;
    const std::string name = s.substr(j, k - j);
    if (name.empty()) return "empty tag name at byte " + std::to_string(i);
    char quote = 0;  // scan to the tag's end, skipping quoted attribute values
    for (; k < s.size(); ++k) {
      if (quote) { if (s[k] == quote) quote = 0; continue; }
      if (s[k] == '"' || s[k] == '\'') quote = s[k];
      else if (s[k] == '<') return "'<' inside tag " + name;
      else if (s[k] == '>') break;
    }
    if (k >= s.size()) return "unterminated tag " + name;
    const bool self_closing = s[k - 1] == '/';
    if (closing) {
      if (open.empty() || open.back() != name) return "</" + name + "> does not close <" + (open.empty() ? "" : open.back()) + ">";
      open.pop_back();
    } else if (!self_closing) {
      if (open.empty()) ++roots;
      open.push_back(name);
    } else if (open.empty()) {
      ++roots;
    }
    i = k;
  }
  if (!open.empty()) return "<" + open.back() + "> never closed";
  if (roots != 1) return std::to_string(roots) + " root elements";
  return "";
}

// Whether an executable named gnuplot is on PATH (whether it is installed; not whether it works).
inline bool gnuplot_on_path() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    if (::access((dir + "/gnuplot").c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

// First line of every render test (tag [gnuplot]). gnuplot installed: returns, and the test then fails on any
// failing render. gnuplot absent: under CTest (tests/CMakeLists.txt sets GRADFLOW_TEST_SKIP_CODE=77 and
// SKIP_RETURN_CODE 77 on these tests) the process says so and exits with that code, which CTest reports as
// skipped; run by hand without it, the test fails with the reason (leave these tests out with "~[gnuplot]").
inline void require_gnuplot() {
  if (gnuplot_on_path()) return;
  const char* skip = std::getenv("GRADFLOW_TEST_SKIP_CODE");
  if (skip != nullptr) {
    std::cout << "SKIPPED: gnuplot is not installed (apt-get install gnuplot-nox); render test not run" << std::endl;
    std::exit(std::atoi(skip));
  }
  FAIL("gnuplot is not installed (apt-get install gnuplot-nox): this render test needs it; run the others with ~[gnuplot]");
}

}  // namespace gradflow::test
