// style.cpp — see style.hpp. Palette: Okabe & Ito (2008), darkest first; markers alternate filled/open shapes
// and dashes cycle, so series stay distinct in grey print.
#include "gradflow/plot/style.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gradflow/core/utf8.hpp"
#include "gradflow/report/number_text.hpp"

namespace gradflow {
namespace {

struct Style {
  const char* colour;
  int point;         // gnuplot point type: 7 ● 5 ■ 9 ▲ 13 ◆ 6 ○ 4 □ 8 △ 12 ◇
  const char* dash;  // gnuplot dash type: 1 solid, 2 dashed, 4 dash-dot, 3 dotted, then patterns of their own
};
// eight colours, eight markers and eight dash patterns: no two entries share any of the three, so series 5-8 are
// not series 1-4 with open markers (in grey print the dash alone tells them apart)
constexpr Style kPalette[kStyles] = {
    {"#0072B2", 7, "1"},  {"#D55E00", 5, "2"},         {"#009E73", 9, "4"},     {"#CC79A7", 13, "3"},
    {"#E69F00", 6, "(10,4)"},  {"#56B4E9", 4, "(6,3,1.5,3,1.5,3)"},  {"#000000", 8, "(1.5,2.5)"},
    {"#B8A000", 12, "(10,3,3,3)"},  // Okabe–Ito yellow, darkened
};

// Tic values in [lo, hi] at mantissas m·10^k.
std::vector<double> mantissa_tics(double lo, double hi, const std::vector<double>& mantissas) {
  std::vector<double> t;
  for (int k = static_cast<int>(std::floor(std::log10(lo))) - 1; k <= static_cast<int>(std::ceil(std::log10(hi))); ++k)
    for (double m : mantissas) {
      const double v = m * std::pow(10.0, k);
      if (v >= lo * (1 - 1e-12) && v <= hi * (1 + 1e-12)) t.push_back(v);
    }
  return t;
}

// Linear "nice" tics (1, 2, 2.5, 5 times a power of ten) across [lo, hi], about four of them.
std::vector<double> linear_tics(double lo, double hi) {
  const double raw = (hi - lo) / 4, p = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * p;
  for (double m : {1.0, 2.0, 2.5, 5.0})
    if (m * p >= raw) { step = m * p; break; }
  std::vector<double> t;
  for (double v = std::ceil(lo / step) * step; v <= hi * (1 + 1e-12); v += step) t.push_back(v);
  return t;
}

}  // namespace

std::string palette_commands() {
  std::string s;
  char line[160];
  for (int k = 0; k < kStyles; ++k) {
    std::snprintf(line, sizeof line, "set linetype %d lc rgb '%s' lw 1.5 pt %d ps 0.55 dt %s\n", k + 1,
                  kPalette[k].colour, kPalette[k].point, kPalette[k].dash);
    s += line;
  }
  std::snprintf(line, sizeof line, "set linetype cycle %d\n", kStyles);
  return s + line;
}

std::string series_style(int k) {
  if (k < kStyles) return "lt " + std::to_string(k + 1);
  const int c = k % kStyles, round = k / kStyles % kStyles;  // round >= 1: shift marker and dash away from c's own
  return colour_style(c) + " pt " + std::to_string(kPalette[(c + round) % kStyles].point) + " dt " +
         kPalette[(c + 3 * round) % kStyles].dash;
}

std::string colour_style(int k) { return "lt " + std::to_string(k % kStyles + 1); }

std::string mark_style(int k) {
  return "pt " + std::to_string(kPalette[k % kStyles].point) + " dt " + kPalette[k % kStyles].dash;
}

std::string base_style() {
  return "set border 3 lw 0.8\nset tics nomirror out scale 0.6\nset key samplen 3.5 spacing 1.1 opaque\n";
}

std::string gp_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "''";
    else if (c == '\n' || c == '\r') q += ' ';
    else q += c;
  }
  return q + "'";
}

std::string gp_enhanced_literal(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '_' || c == '^' || c == '{' || c == '}' || c == '@' || c == '&' || c == '~' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string gp_num(double v) {
  if (!std::isfinite(v)) return "NaN";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

bool spans_decades(double lo, double hi) { return lo > 0 && hi > 0 && hi / lo > 10; }

std::string log_axis(const std::string& axis, double lo, double hi, int max_tics) {
  if (!(lo > 0) || !(hi > 0)) return "set logscale " + axis + "\n";
  if (hi < lo * 1.02) lo /= 1.1, hi *= 1.1;  // (nearly) constant values: show a small window around them
  const double l0 = std::log10(lo), l1 = std::log10(hi), pad = std::max(0.04 * (l1 - l0), 0.01);
  double rlo = std::pow(10.0, l0 - pad), rhi = std::pow(10.0, l1 + pad);
  std::string s = "set logscale " + axis + "\n";
  const std::string range = "set " + axis + "range [";
  if (l1 - l0 >= 2) {
    s += range + gp_num(rlo) + ":" + gp_num(rhi) + "]\n";
    const int per = static_cast<int>(std::ceil((l1 - l0) / std::max(max_tics, 2)));  // decades per tic
    if (per > 1) {  // a short axis over many decades: a tic every `per` decades, so the labels do not touch
      s += "set " + axis + "tics " + gp_num(std::pow(10.0, per)) + "\nset m" + axis + "tics " + std::to_string(per) + "\n";
      s += "set format " + axis + " '10^{%L}'\n";
      return s;
    }
    s += "set m" + axis + "tics 10\n";
    if (l1 - l0 > 3) s += "set format " + axis + " '10^{%L}'\n";
    return s;
  }
  // the coarsest mantissas giving 3 tics, never more than max_tics (they would collide); a tic within 0.05 decade
  // beyond the data stretches the range to it, so the axis does not end just short of a labelled value
  const double ext = std::pow(10.0, 0.05);
  std::vector<double> tics;
  for (const auto& m : std::vector<std::vector<double>>{{1}, {1, 2, 5}, {1, 1.5, 2, 3, 5, 7}, {1, 2, 3, 4, 5, 6, 7, 8, 9}}) {
    std::vector<double> t = mantissa_tics(rlo / ext, rhi * ext, m);
    if (static_cast<int>(t.size()) > max_tics) break;
    tics = std::move(t);
    if (tics.size() >= 3) break;
  }
  if (tics.size() < 2) tics = linear_tics(rlo, rhi);
  rlo = std::min(rlo, tics.front() / 1.01), rhi = std::max(rhi, tics.back() * 1.01);
  s += range + gp_num(rlo) + ":" + gp_num(rhi) + "]\n";
  s += "set " + axis + "tics (";
  for (size_t i = 0; i < tics.size(); ++i) s += (i ? ", " : "") + gp_quote(number_text(tics[i])) + " " + gp_num(tics[i]);
  return s + ")\nunset m" + axis + "tics\n";
}

std::string linear_tics_step(const std::string& axis, double lo, double hi, int max_tics) {
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi) || max_tics < 1) return "";
  const double raw = (hi - lo) / max_tics, p = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * p;
  for (double m : {1.0, 2.0, 5.0})  // (not 2.5: its labels take a digit more, 0.975)
    if (m * p >= raw * (1 - 1e-12)) { step = m * p; break; }
  return "set " + axis + "tics " + gp_num(step) + "\n";
}

std::vector<std::string> title_lines(const std::string& title, double width_in) {
  // characters that fit: about 0.075 in each at 9 pt (serif, mixed case), a little margin on each side
  const size_t fit = static_cast<size_t>(std::max(8.0, (width_in - 0.25) / (0.075 * kFontPt / 9)));
  std::vector<std::string> lines;
  std::string line, word;
  const auto flush_word = [&] {
    if (word.empty()) return;
    if (!line.empty() && utf8_length(line) + 1 + utf8_length(word) > fit) lines.push_back(line), line.clear();
    line += (line.empty() ? "" : " ") + word;
    word.clear();
  };
  for (char c : title) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') flush_word();
    else word += c;
  }
  flush_word();
  if (!line.empty()) lines.push_back(line);
  return lines;
}

std::string gp_lines(const std::vector<std::string>& lines) {
  std::string t;
  for (const auto& l : lines) t += (t.empty() ? "" : ".\"\\n\".") + gp_quote(l);
  return t.empty() ? "''" : t;
}

double title_band(const std::vector<std::string>& lines) {
  return lines.empty() ? 0.0 : 0.08 + 0.2 * static_cast<double>(lines.size()) * kFontPt / 9;
}

}  // namespace gradflow
