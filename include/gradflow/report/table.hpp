// table.hpp — the human-readable table of an analyze report (one row per layer, then the summary).
#pragma once
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace gradflow {

// bars: append a bar per layer whose length is log10 ||dL/dx_l|| on a fixed scale (log_bar; for terminals),
// and a line saying the scale. narrow (terminal.hpp): at most kNarrowColumns characters a line — the gradient,
// its ratio to the top, the first two Jacobian columns and a shorter bar (half as many '#' per decade).
void print_report_table(std::ostream& os, const nlohmann::ordered_json& report, bool bars, bool narrow = false);

inline constexpr int kBarWidth = 24;     // characters of the longest bar
inline constexpr int kBarPerDecade = 4;  // characters per decade: the bars span kBarWidth / kBarPerDecade = 6 decades
// The bar of `value` when the largest value is 10^log10_max: kBarWidth + kBarPerDecade·(log10 value − log10_max)
// '#', rounded ("<" below one character, "?" for a value that is not positive and finite). A 2 % spread draws
// bars of equal length; a factor 1/100 draws 8 '#' fewer.
std::string log_bar(double value, double log10_max);

}  // namespace gradflow
