// placement.hpp — where the normalization sits. A placement is one entry (a final class in its own file under
// src/model/placements/, listed once in src/model/placements/registry.cpp) that carries everything about its
// scheme: the recipe of ResidualUnit specs for each block, whether a final norm follows the stack, its own
// command-line options (declared here once; every command that builds a model registers them), how it rescales
// the weights --init drew, the initial value of the parameters it adds, an optional data-dependent profiling step
// (Admin) and the constants it reports. docs/placements.md documents every scheme; docs/architecture.md lists
// the files a new one touches.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gradflow/model/config.hpp"
#include "gradflow/model/residual_unit.hpp"
#include "gradflow/core/params.hpp"

namespace gradflow {

class Model;

// An option only some schemes read, e.g. --deepnorm-alpha. Its value lives in ModelConfig::scheme under `name`.
struct SchemeOption {
  enum class Type { Number, Count, Word };
  SchemeOption(std::string name_, Type type_, std::string help_, std::vector<std::string> words_ = {})
      : name(std::move(name_)), type(type_), help(std::move(help_)), words(std::move(words_)) {}
  std::string name;                // the flag without dashes, e.g. "deepnorm-alpha" (report key: "deepnorm_alpha")
  Type type = Type::Number;
  std::string help;                // --help text, with the default, e.g. "deepnorm: skip scale alpha (default (2L)^(1/4))"
  std::vector<std::string> words;  // Word: the allowed values, the first is the default
  bool show_default = false;       // --help shows the default value (a constant default such as 0 or post-first)
  double number_default = 0;       // Number: the default when show_default (else the scheme computes it)
  // Checks a given value against the rest of the model (e.g. K <= L); throws Error naming the option and the fix.
  std::function<void(const ModelConfig&)> check;
};

class Placement {
 public:
  virtual ~Placement() = default;
  virtual std::string name() const = 0;      // --placement NAME
  // The name a paper writes (Post-LN, Pre-LN, DeepNorm): figures' legends and titles (docs/plotting.md).
  virtual std::string display_name() const { return name(); }
  virtual std::string equation() const = 0;  // one line, e.g. "h = LN1(x + A(x)); y = LN2(h + F(h))"
  virtual std::string paper() const = 0;     // citation
  virtual std::vector<SchemeOption> options() const { return {}; }  // its own options
  // The units of block `layer` (attention, then feed-forward).
  virtual std::vector<UnitSpec> block(const ModelConfig& cfg, Index layer) const = 0;
  virtual bool final_norm_default(const ModelConfig&) const { return false; }
  // Initialization (init.hpp): after --init drew a weight or bias of `role`, the scheme's own rescaling of the
  // reference code (DeepNet's β, Sub-LN's γ, B2T's L^(-1/2)); --init-scale multiplies afterwards.
  virtual void rescale_initial(const ModelConfig&, ParamRole, Index /*d_model*/, Mat&) const {}
  // The initial value of a parameter the scheme adds (Gate, SkipVector, HeadScale): 1 unless overridden.
  virtual double initial_value(const ModelConfig&, ParamRole) const { return 1.0; }
  // The data-dependent step of initialization, after initialize(): e.g. Admin profiles ω by one forward pass on x0.
  virtual void profile(Model&, const Mat& /*x0*/) const {}
  virtual bool profiles() const { return false; }  // whether profile() does anything
  // The report: its options' values as resolved (into config), the constants the recipe used (into
  // placement_constants), and per block what the model holds (e.g. ReZero's gate, Admin's ω, mix's post_ln).
  virtual void config_fields(const ModelConfig&, nlohmann::ordered_json&) const {}
  virtual void constants(const ModelConfig&, nlohmann::ordered_json&) const {}
  virtual void layer_constants(const Model&, Index /*layer*/, nlohmann::ordered_json&) const {}
  // The options line of `gradflow placements`: its own flags, then --no-final-norm (when it has a final norm) and
  // --residual-scale, which every scheme takes.
  std::string options_summary() const;
};

// Every scheme, in the order `gradflow placements` lists them (src/model/placements/registry.cpp).
const std::vector<std::unique_ptr<Placement>>& placements();
const Placement& find_placement(const std::string& name);  // Error listing the known names
// The display name of the placement `name`; `name` itself when no scheme has it (a report from another version).
std::string placement_display_name(const std::string& name);
// Every option of every scheme, each name once, in registry order (the command line registers these).
const std::vector<SchemeOption>& scheme_options();

}  // namespace gradflow
