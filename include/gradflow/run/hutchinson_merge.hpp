// hutchinson_merge.hpp — the report of a --mode matrix-free run split into tasks (analyze --plan,
// commands/analyze_plan.hpp) from its tasks' reports. A probe task runs chunks [begin, end) of --probe-chunk
// Hutchinson probes (AnalysisOptions::part) and its report holds, besides every other analysis's fields,
// "hutchinson_partial": per chunk and layer the sums its probes' Gram matrix leaves (matrix_free/hutchinson.hpp:
// ProbeSums), and nulls where the estimates go. The plan's Lanczos task computes the singular values alone. The merge
// adds the chunks of every task in chunk order — the additions of one process — and writes the estimates where the
// nulls are, so the merged report equals the single-process run's bit for bit (timing and metadata aside). Defined by
// the matrix-free analysis (analyses/matrix_free_norms.cpp), which writes both (run/ does not include matrix_free/).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gradflow {

// Why a task report's "hutchinson_partial" cannot be merged ("" when it can): not there, malformed (a number of the
// wrong kind, a chunk out of its range, a depth other than the report's), or not of `chunks` [begin, end).
std::string hutchinson_partial_problem(const nlohmann::ordered_json& report, long long begin, long long end);

// Writes the estimates into `report` (the Lanczos task's, or the first task's when the run has no Lanczos values; its
// "hutchinson_partial" removed) from `partials` (every probe task's "hutchinson_partial", in plan order, each checked
// by hutchinson_partial_problem). When the partials do not cover every chunk (a merge with --allow-partial), the
// estimates stay null and the summary lists the probes covered ("hutchinson_probes_covered": [[first, end), ...]).
// Error (exit 2) when the partials are of different runs.
void merge_hutchinson_partials(nlohmann::ordered_json& report, const std::vector<nlohmann::ordered_json>& partials);

}  // namespace gradflow
