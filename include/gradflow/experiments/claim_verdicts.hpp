// claim_verdicts.hpp — a claims spec's statements decided at a level, from the report its run wrote
// (docs/experiments.md, "Claims decided at a level"). A spec's "verdicts" is a list of statements:
//   {"says": "Post-LN's gradient falls towards the input at L = 24",
//    "metric": "summary.bottom_to_top_grad_ratio",
//    "group": {"placement": "post", "layers": 24}, "expect": "less", "than": 1}
//   {"says": "LayerNorm Scaling is flatter than Pre-LN",
//    "metric": "summary.bottom_to_top_grad_ratio",
//    "numerator": {"placement": "lns", "layers": 24}, "denominator": {"placement": "pre", "layers": 24},
//    "expect": "less"}
// with an optional "level" (default 0.95). A selector names a group by placement, layers and, in a sweep, "value"
// ("value2"); every key it gives must match. One group against a number: the group's geometric interval when the
// metric is positive in every seed (else the interval of its mean) against "than". Two groups: the paired comparison
// of the report's ratios or comparisons entry for that pair (statistics.hpp), numerator over denominator, against
// "than" when given (e.g. 0.01: "A is below 1/100 of B"), else 1 (a difference of signed values: against "than" or 0). The report's intervals are at its own level; another level rescales the interval's
// half-width by the ratio of the t quantiles (the same n, so exact for a t interval).
//   holds         the interval lies on the expected side
//   fails         the interval lies on the other side
//   undetermined  the interval holds both; "seeds_needed" then estimates the seeds at which an interval of the same
//                 spread would decide (null when the estimate sits exactly at the reference)
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace gradflow {

// The fix every verdict error ends with (docs/experiments.md, "Claims decided at a level").
extern const char* const kVerdictFix;

// Checks the spec's "verdicts" list (types, expect, level in (0, 1), selectors); Error naming `where`, the entry and
// the fix. Defined in verdict_spec.cpp (the spec reader's part, without the statistics).
void check_verdict_specs(const nlohmann::ordered_json& verdicts, const std::string& where);

// Each statement of spec["verdicts"] decided against the compare/sweep `report` (groups, ratios, comparisons):
// [{"says", "expect", "level", "n", "estimate", "ci_low", "ci_high", "reference", "by", "verdict",
//   "seeds_needed"}]. Error (exit 2) when a statement names a group, pair or metric the report lacks.
nlohmann::ordered_json decide_claims(const nlohmann::ordered_json& spec, const nlohmann::ordered_json& report);

}  // namespace gradflow
