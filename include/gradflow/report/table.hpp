// table.hpp — the human-readable table of an analyze report (one row per layer, then the summary).
#pragma once
#include <ostream>

#include <nlohmann/json.hpp>

namespace gradflow {

// bars: append a small bar per layer proportional to log10 ||dL/dx_l|| (for terminals).
void print_report_table(std::ostream& os, const nlohmann::ordered_json& report, bool bars);

}  // namespace gradflow
