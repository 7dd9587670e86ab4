// model_options.cpp — see model_options.hpp.
#include "cli/model_options.hpp"

#include "gradflow/analysis/run_inputs.hpp"
#include "gradflow/model/placement.hpp"

namespace gradflow::cli {

void add_model_options(CLI::App& app, ModelOptions& o) {
  auto& m = o.rc.model;
  app.add_option("--placement", m.placement, "where the norm sits (see `gradflow placements`)")->capture_default_str();
  o.layers_flag = app.add_option("--layers", m.layers, "number of blocks L")->capture_default_str();
  o.d_model_flag = app.add_option("--d-model", m.d_model, "width d")->capture_default_str();
  app.add_option("--heads", m.heads, "attention heads h (must divide d)")->capture_default_str();
  o.d_ff_flag = app.add_option("--d-ff", m.d_ff, "feed-forward width (default 4*d)");
  o.seq_len_flag = app.add_option("--seq-len", o.rc.analysis.seq_len, "tokens n of the input")->capture_default_str();
  app.add_option("--activation", o.activation, "relu | gelu (exact erf form)")->capture_default_str();
  app.add_flag("--causal", m.causal, "causal attention mask");
  app.add_option("--norm", o.norm, "layernorm | rmsnorm | dyt")->capture_default_str();
  app.add_flag("--no-final-norm", o.no_final_norm, "drop the final norm of pre/sandwich/mix");
  app.add_option("--residual-scale", m.residual_scale, "x + LAMBDA*G(...): the residual branch weight")
      ->capture_default_str();
  add_scheme_options(app, o.scheme);
  app.add_option("--init", o.rc.init.scheme, "torch | xavier | xavier-normal | gpt2 | t-fixup")->capture_default_str();
  app.add_option("--init-scale", o.init_scale, "multiply out_proj and linear2 weights by C, or inv-sqrt-2L")
      ->capture_default_str();
  app.add_option("--seed", o.rc.init.seed, "seed of weights, input and cotangent")->capture_default_str();
  app.add_option("--loss", o.rc.analysis.loss, "dot (L = sum g*y, g ~ N(0,1)) | half-sq (L = sum y^2 / 2)")
      ->capture_default_str();
  app.add_option("--weights", o.rc.weights, "parameters from a PyTorch nn.TransformerEncoder state_dict (.safetensors); "
                 "L, d, d_ff and the final norm come from it (give --heads and --placement)")
      ->check(CLI::ExistingFile);
  app.add_option("--input", o.rc.input, "input tokens x_0 from a .npy of shape (n, d) or (1, n, d) (default: seeded "
                 "N(0,1)); n comes from it")->check(CLI::ExistingFile);
  app.add_option("--cotangent", o.rc.cotangent, "g of --loss dot from a .npy of the output's shape (default: seeded N(0,1))")
      ->check(CLI::ExistingFile);
  app.add_option("--max-memory", o.max_memory, "memory budget of explicit mode, e.g. 512M, 8G (default: half of RAM)");
}

RunConfig resolve(const ModelOptions& o) {
  RunConfig rc = o.rc;
  rc.model.activation = parse_activation(o.activation);
  rc.model.norm = parse_norm_kind(o.norm);
  if (o.no_final_norm) rc.model.final_norm = false;
  rc.model.scheme = scheme_values(o.scheme);
  find_placement(rc.model.placement);
  GivenSizes given;
  const auto explicit_value = [](const CLI::Option* f, Index v) {
    return f && f->count() > 0 ? std::optional<Index>(v) : std::nullopt;
  };
  given.layers = explicit_value(o.layers_flag, rc.model.layers);
  given.d_model = explicit_value(o.d_model_flag, rc.model.d_model);
  given.d_ff = explicit_value(o.d_ff_flag, rc.model.d_ff);
  given.seq_len = explicit_value(o.seq_len_flag, rc.analysis.seq_len);
  if (o.no_final_norm) given.final_norm = false;
  apply_file_sizes(rc, given);  // --weights/--input fix L, d, d_ff, the final norm and n
  rc.model.validate();
  rc.init.scale_text = o.init_scale;
  rc.init.scale = parse_init_scale(o.init_scale, rc.model.layers);
  if (!o.max_memory.empty()) rc.analysis.max_memory_bytes = parse_memory_size(o.max_memory, "--max-memory");
  return rc;
}

}  // namespace gradflow::cli
