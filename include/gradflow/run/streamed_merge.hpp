// streamed_merge.hpp — the report of a --mode streamed run split into tasks (analyze --plan, commands/analyze_plan.hpp)
// from its tasks' reports. A task runs chunks [begin, end) of the sweep (AnalysisOptions::part) and its report holds,
// besides every other analysis's fields, "streamed_partial": each chunk's sums of squares per layer, exactly as the
// sweep adds them (matrix_free/streamed.hpp: ChunkSquares), and nulls where the norms go. The merge adds the chunks of
// every task in chunk order — the additions of one process — and writes the norms where the nulls are, so the merged
// report equals the single-process run's bit for bit (timing and metadata aside). Defined by the streamed-norms
// analysis (analyses/streamed_norms.cpp), which writes both (run/ does not include matrix_free/).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gradflow {

// Why a task report's "streamed_partial" cannot be merged ("" when it can): not there, malformed (a number of the
// wrong kind, a chunk out of its range, a depth other than the report's), or not of `chunks` [begin, end).
std::string streamed_partial_problem(const nlohmann::ordered_json& report, long long begin, long long end);

// Writes the norms into `report` (the first task's, its "streamed_partial" removed) from `partials` (every task's
// "streamed_partial", in plan order, each checked by streamed_partial_problem). When the partials do not cover every
// chunk (a merge with --allow-partial), the norms stay null and the summary lists the rows covered
// ("streamed_rows_covered": [[first, end), ...]). Error (exit 2) when the partials are of different shapes.
void merge_streamed_partials(nlohmann::ordered_json& report, const std::vector<nlohmann::ordered_json>& partials);

}  // namespace gradflow
