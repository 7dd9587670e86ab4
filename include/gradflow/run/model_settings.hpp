// model_settings.hpp — the options that build a model and an analysis run on it, each declared once here with
// its command-line name, help text and default, and set by name and value: by the command line (src/cli registers
// every entry for analyze, jacobian, export, compare and sweep, and the architecture/init entries for train and
// train-sweep), by `sweep` for its swept parameter, and by spec files through the same parser. resolve() turns the
// settings into a RunConfig. The placements' own options (--deepnorm-alpha, ...) come from their entries
// (model/placement.hpp) and are part of this table.
#pragma once
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "gradflow/run/analyze.hpp"

namespace gradflow {

// What the options say before resolve(): the RunConfig with every value set directly, plus the text that only
// resolve() can turn into values (enums, --init-scale's inv-sqrt-2L needs L, sizes fixed by --weights/--input).
struct ModelSettings {
  RunConfig rc;
  std::string activation = "relu", ffn = "mlp", norm = "layernorm", init_scale = "1", max_memory;
  std::string arch = "classic";  // --arch: a preset of the options above (run/arch_presets.hpp), applied by resolve()
  bool no_final_norm = false;
  std::set<std::string> given;  // names set explicitly (the size options are checked against --weights/--input)
  // The placements of the whole command (compare, sweep, train-sweep, a spec); empty: only rc.model.placement.
  // resolve() refuses a placement's own option (e.g. --deepnorm-alpha) or --no-final-norm that none of them takes.
  std::vector<std::string> run_placements;
};

struct ModelOption {
  std::string name;          // the flag without dashes: "d-model"
  std::string help;
  bool flag = false;         // takes no value (--causal): set with "true"
  bool training = false;     // train and train-sweep take it too (the architecture and initialization options)
  std::string default_text;  // shown in --help ("" when the default is computed, e.g. d_ff = 4·d)
  std::function<void(ModelSettings&, const std::string&)> set;  // Error naming the option and the fix
};

// Every option, in --help order.
const std::vector<ModelOption>& model_options();
// Sets option `name` (without dashes) from its text ("true" for a flag) and records it as given; Error for an
// unknown name or a bad value.
void set_model_option(ModelSettings& s, const std::string& name, const std::string& value);
// The RunConfig: enums parsed, --init-scale resolved against L, the sizes fixed by --weights/--input applied (an
// explicitly given size that differs is an Error), the model validated.
RunConfig resolve(const ModelSettings& s);

// A number as the command line reads it (strtold, then rounded to double: the parsing every option has always had,
// so results stay bit for bit); Error naming `option` when `text` is not one.
double parse_number(const std::string& text, const std::string& option);
// A whole number in base 10; Error naming `option` otherwise.
Index parse_integer(const std::string& text, const std::string& option);

}  // namespace gradflow
