// model_options.hpp — the model and analysis options shared by analyze, jacobian, export, compare, ...
// One place defines each flag, its default and its help text.
#pragma once
#include <CLI/CLI.hpp>

#include "cli/scheme_options.hpp"
#include "gradflow/analysis/analyze.hpp"

namespace gradflow::cli {

struct ModelOptions {
  RunConfig rc;
  std::string activation = "relu", norm = "layernorm", init_scale = "1", max_memory;
  bool no_final_norm = false;
  SchemeFlags scheme;  // --deepnorm-alpha, --mix-order, ...: every placement's own options
  // The size flags, so resolve() knows which were given explicitly (checked against --weights/--input).
  CLI::Option *layers_flag = nullptr, *d_model_flag = nullptr, *d_ff_flag = nullptr, *seq_len_flag = nullptr;
};

// Adds --layers, --d-model, ... to `app`; values land in `o`.
void add_model_options(CLI::App& app, ModelOptions& o);
// Resolves strings into enums and numbers; throws Error naming the option and the fix.
RunConfig resolve(const ModelOptions& o);

}  // namespace gradflow::cli
