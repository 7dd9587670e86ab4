// spectrum_json.cpp — the "spectrum" object of --spectrum (see spectrum_json.hpp).
#include "gradflow/report/spectrum_json.hpp"

#include <cmath>

#include "gradflow/linalg/svd.hpp"

namespace gradflow {
using Json = nlohmann::ordered_json;

Json spectrum_json(const Vec& s) {
  const Index m = s.size();
  Json values = Json::array();
  for (Index i = 0; i < m; ++i) values.push_back(s(i));
  Json out{{"singular_values", std::move(values)}};
  if (m == 0) return out;
  const double largest = s(0), smallest = s(m - 1);
  // median of a descending list: the middle one, or the mean of the middle two
  const double median = m % 2 ? s(m / 2) : 0.5 * (s(m / 2 - 1) + s(m / 2));
  Index rank = 0;
  while (rank < m && s(rank) > kRankRtol * largest) ++rank;
  out["largest"] = largest;
  out["smallest"] = smallest;
  out["median"] = median;
  out["numerical_rank"] = rank;
  out["log10_condition_number"] = rank > 0 ? Json(std::log10(largest / s(rank - 1))) : Json(nullptr);
  out["condition_over"] = "singular values above rank_threshold_rtol * largest";
  return out;
}

}  // namespace gradflow
