// partial_digest.hpp — the seal of a task's share of a split run ("streamed_partial", "hutchinson_partial"): the
// SHA-256 of its numbers, written by the task beside them ("digest") and checked by the merge, so a share whose
// numbers were edited after the task wrote them (a product entry changed by hand, a copy from another file) is
// refused by name rather than merged into the norms (docs/cluster.md §6). The digest covers the share's JSON as
// gradflow prints it (every number in its shortest round-trip form), without the "digest" key itself.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace gradflow {

// Adds "digest" to the share `partial`.
void seal_partial(nlohmann::ordered_json& partial);

// "" when `partial`'s digest matches its numbers; else why not ("its \"digest\" is missing", "its numbers do not
// match its \"digest\" (edited after the task wrote them)"). `key` names the share in the text.
std::string partial_digest_problem(const nlohmann::ordered_json& partial, const std::string& key);

}  // namespace gradflow
