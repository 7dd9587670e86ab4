// experiment_bars.cpp — see experiment_terminal.hpp: print_experiment_bars.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "gradflow/core/utf8.hpp"
#include "gradflow/experiments/experiment_terminal.hpp"
#include "gradflow/model/placement.hpp"
#include "gradflow/report/fields.hpp"
#include "gradflow/report/flag_meaning.hpp"
#include "gradflow/report/terminal.hpp"

namespace gradflow {
using Json = nlohmann::ordered_json;
using namespace fields;

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", v);
  return buf;
}

// `s` cut or padded to `width` characters as a terminal shows them.
std::string fit(const std::string& s, size_t width) {
  std::string out;
  size_t shown = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool starts = utf8_starts(s, i);
    if (starts && shown == width) break;
    shown += starts;
    out += s[i];
  }
  return out + std::string(width - shown, ' ');
}

struct Column {
  std::string label;
  std::vector<double> grad;  // per layer, the mean over seeds
};

}  // namespace

void print_experiment_bars(std::ostream& os, const Json& report, const TerminalStyle& style, bool all) {
  const Json& groups = report[kGroups];
  if (groups.empty()) return;
  if (!all && groups.size() > kMaxBarGroups) {
    os << "(no bars: " << groups.size() << " groups, more than " << kMaxBarGroups
       << " side by side; --bars draws them all, `gradflow plot --kind grad-by-depth` as a figure)\n";
    return;
  }
  const bool sweep = report.contains(kParam), two_d = report.contains(kParam2);
  std::map<long long, std::vector<Column>> by_depth;  // the groups of each depth, in the report's order
  double hi = -INFINITY;
  for (const auto& g : groups) {
    Column c;
    c.label = placement_display_name(g.value(kPlacement, std::string("?")));
    // the swept values as the table's columns give them, a flag by its meaning ("no final norm")
    const auto value = [&g, &report](const char* param, const char* field) {
      const std::string v = g.value(field, std::string());
      const std::string meaning = flag_meaning(report.value(param, std::string()), v);
      return meaning.empty() ? v : meaning;
    };
    if (sweep) c.label += ", " + value(kParam, kValue);
    if (two_d) c.label += ", " + value(kParam2, kValue2);
    if (!g.contains(kPerLayer)) continue;
    for (const auto& l : g[kPerLayer]) {
      const double v = l.contains(kGradNorm) && l[kGradNorm].is_object() && l[kGradNorm][kMean].is_number()
                           ? l[kGradNorm][kMean].get<double>()
                           : NAN;
      c.grad.push_back(v);
      if (v > 0 && std::isfinite(v)) hi = std::max(hi, std::log10(v));
    }
    by_depth[g.value(kLayers, 0LL)].push_back(std::move(c));
  }
  if (by_depth.empty() || !std::isfinite(hi)) return;
  const int bar = style.narrow ? 12 : 24, per_decade = style.narrow ? 2 : 4;
  const size_t cell = static_cast<size_t>(bar) + 1 + 8, gap = 2;  // the bar, a space, the number ("6.13e+00")
  const size_t width = style.narrow ? kNarrowColumns : 160, lead = 6;  // "layer " or its index
  const size_t per_row = std::max<size_t>(1, (width - lead) / (cell + gap));
  const std::string intro = "||dL/dx_l|| by layer (mean over seeds), one scale for every group: " +
                            std::to_string(per_decade) + " # per decade, the longest (" + std::to_string(bar) +
                            " #) = " + number(std::pow(10.0, hi)) + "; '<' = more than " +
                            std::to_string(bar / per_decade) + " decades below it\n";
  os << (style.narrow ? wrap_lines(intro, kNarrowColumns) : intro);
  const auto trimmed = [](std::string row) {
    while (!row.empty() && row.back() == ' ') row.pop_back();
    return row + "\n";
  };
  for (const auto& [L, columns] : by_depth)
    for (size_t first = 0; first < columns.size(); first += per_row) {
      const size_t last = std::min(columns.size(), first + per_row);
      // a label longer than its column goes on two lines, broken after its placement ("Sandwich-LN," / "no final
      // norm")
      std::string head = fit("layer", lead), second = fit("", lead);
      bool two_lines = false;
      for (size_t c = first; c < last; ++c) {
        const std::string& label = columns[c].label;
        const size_t comma = label.find(", ");
        const bool split = utf8_length(label) > cell && comma != std::string::npos;
        two_lines |= split;
        head += fit(split ? label.substr(0, comma + 1) : label, cell) + std::string(gap, ' ');
        second += fit(split ? label.substr(comma + 2) : "", cell) + std::string(gap, ' ');
      }
      os << "L = " << L << "\n" << trimmed(head) << (two_lines ? trimmed(second) : "");
      for (long long l = 0; l < L; ++l) {
        std::string row = fit(std::to_string(l), lead);
        for (size_t c = first; c < last; ++c) {
          const double v = l < static_cast<long long>(columns[c].grad.size()) ? columns[c].grad[l] : NAN;
          row += fit(log_bar(v, hi, bar, per_decade), static_cast<size_t>(bar)) + " " + number(v) +
                 std::string(gap, ' ');
        }
        os << trimmed(row);
      }
    }
}

}  // namespace gradflow
