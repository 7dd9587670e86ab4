// nearest_names.hpp — spelling distance between names, for "did you mean ..." in errors (an option, a metric).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace gradflow {

// Edits from a to b: insertions, deletions, substitutions and swaps of neighbours (optimal string alignment).
size_t edit_distance(const std::string& a, const std::string& b);
// The `k` names nearest to `word`: those containing it first, then by edit distance (ties in the given order).
std::vector<std::string> nearest_names(const std::string& word, const std::vector<std::string>& names, size_t k);

}  // namespace gradflow
