// chunk_coverage.hpp — which chunks the tasks of a split run (analyze --plan) brought to its merge, taken in plan
// order: the runs of consecutive chunks as [first, end) of their units (identity rows or probes), whether every chunk
// is there, and the list a partial merge's summary reports. Shared by the streamed and the Hutchinson merges
// (run/streamed_merge.hpp, run/hutchinson_merge.hpp).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gradflow/core/error.hpp"
#include "gradflow/core/types.hpp"

namespace gradflow {

struct ChunkCoverage {
  std::vector<std::pair<Index, Index>> units;  // [first, end) units of each run of consecutive chunks
  Index next = 0;                              // the chunk that follows all so far
  bool gap = false;                            // a chunk before `next` is missing

  // Chunks [begin, end), holding units [first, last); `what` names the merge in the internal error raised when they
  // come before a chunk already taken (the plan's order is chunk order).
  void add(Index begin, Index end, Index first, Index last, const std::string& what) {
    if (begin < next) throw Error("internal: " + what + " partials out of chunk order", ErrorKind::Internal);
    if (begin != next) gap = true;
    if (!units.empty() && units.back().second == first)
      units.back().second = last;
    else
      units.emplace_back(first, last);
    next = end;
  }
  bool complete(Index chunks) const { return !gap && next == chunks; }
  nlohmann::ordered_json json() const {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const auto& [f, e] : units) a.push_back(nlohmann::ordered_json::array({f, e}));
    return a;
  }
};

}  // namespace gradflow
