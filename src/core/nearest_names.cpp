// nearest_names.cpp — see nearest_names.hpp.
#include "gradflow/core/nearest_names.hpp"

#include <algorithm>
#include <utility>

namespace gradflow {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::vector<std::string> nearest_names(const std::string& word, const std::vector<std::string>& names, size_t k) {
  std::vector<std::pair<size_t, size_t>> ranked;  // (rank, index): containing the word ranks 0, then by distance
  for (size_t i = 0; i < names.size(); ++i)
    ranked.emplace_back(!word.empty() && names[i].find(word) != std::string::npos ? 0 : 1 + edit_distance(word, names[i]), i);
  std::stable_sort(ranked.begin(), ranked.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < ranked.size() && i < k; ++i) out.push_back(names[ranked[i].second]);
  return out;
}

}  // namespace gradflow
