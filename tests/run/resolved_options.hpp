// resolved_options.hpp — the RunConfig a list of model options (name without dashes, value) resolves to, as the
// command line and spec files set them (run/model_settings.hpp); shared by the tests/run option tests.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "gradflow/run/model_settings.hpp"

namespace gradflow::test {

inline RunConfig resolved(const std::vector<std::pair<std::string, std::string>>& options) {
  ModelSettings s;
  for (const auto& [name, value] : options) set_model_option(s, name, value);
  return resolve(s);
}

}  // namespace gradflow::test
