// scheme_options.hpp — the placements' own options (--deepnorm-alpha, --rezero-alpha, --mix-order, ...) on the
// command line: each declared once by its placement entry (model/placement.hpp), registered here for every command
// that builds a model (analyze, jacobian, export, compare, sweep, train, train-sweep).
#pragma once
#include <map>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "gradflow/model/config.hpp"

namespace gradflow::cli {

struct SchemeFlags {
  std::map<std::string, std::optional<double>> numbers;
  std::map<std::string, std::optional<Index>> counts;
  std::map<std::string, std::optional<std::string>> words;
};

// Adds one flag per scheme option of every registered placement; values land in `f`.
void add_scheme_options(CLI::App& app, SchemeFlags& f);
// The given values, for ModelConfig::scheme (options not given stay absent: their scheme's default applies).
SchemeValues scheme_values(const SchemeFlags& f);

}  // namespace gradflow::cli
