// experiment_terminal.hpp — a compare/sweep report on a terminal (report/terminal.hpp: TerminalStyle): the table,
// narrow or not, and the gradient at every layer of every group as bars on one shared scale, the groups of one
// depth side by side, so Post-LN's profile and Pre-LN's can be compared at a glance.
#pragma once
#include <ostream>

#include <nlohmann/json.hpp>

#include "gradflow/report/terminal.hpp"

namespace gradflow {

// The comparison table (experiment.hpp's print_experiment_table) in `style`: narrow keeps three metric columns
// (bottom/top, factor per layer, ||dL/dx_0||) and wraps the prose lines.
void print_experiment_table(std::ostream& os, const nlohmann::ordered_json& report, const TerminalStyle& style);

// The mean over seeds of ||dL/dx_l|| of each group (per_layer[l].grad_norm), a bar per layer on a log scale shared
// by every group of the report, the groups of one depth in columns side by side (as many as fit: 80 characters
// narrow, 160 otherwise). More than kMaxBarGroups groups are summarized in one line unless `all`.
inline constexpr size_t kMaxBarGroups = 12;
void print_experiment_bars(std::ostream& os, const nlohmann::ordered_json& report, const TerminalStyle& style,
                           bool all);

}  // namespace gradflow
