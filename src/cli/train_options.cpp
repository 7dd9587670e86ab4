// train_options.cpp — see train_options.hpp.
#include "cli/train_options.hpp"

#include "gradflow/model/placement.hpp"

namespace gradflow::cli {

void add_train_flags(CLI::App& app, TrainFlags& f) {
  auto& m = f.tc.model;
  auto& t = f.tc;
  app.add_option("--d-model", m.d_model, "width d")->capture_default_str();
  app.add_option("--heads", m.heads, "attention heads h (must divide d)")->capture_default_str();
  app.add_option("--d-ff", m.d_ff, "feed-forward width (default 4*d)");
  app.add_option("--seq-len", t.task.seq_len, "positions n the model reads (the task fills them)")->capture_default_str();
  app.add_option("--activation", f.activation, "relu | gelu (exact erf form)")->capture_default_str();
  app.add_flag("--causal", f.causal, "causal attention mask: always on for training (accepted for symmetry with analyze)");
  app.add_option("--norm", f.norm, "layernorm | rmsnorm | dyt")->capture_default_str();
  app.add_flag("--no-final-norm", f.no_final_norm, "drop the final norm of pre/sandwich/mix");
  app.add_option("--residual-scale", m.residual_scale, "x + LAMBDA*G(...): the residual branch weight")->capture_default_str();
  add_scheme_options(app, f.scheme);
  app.add_option("--init", f.tc.init.scheme, "torch | xavier | xavier-normal | gpt2 | t-fixup")->capture_default_str();
  app.add_option("--init-scale", f.init_scale, "multiply out_proj and linear2 weights by C, or inv-sqrt-2L")
      ->capture_default_str();
  app.add_option("--seed", f.tc.init.seed, "seed of weights and training batches (eval set: seed + 1000003)")
      ->capture_default_str();
  app.add_option("--task", t.task.name, "copy | reverse | sort | recall | markov (docs/training.md)")->capture_default_str();
  app.add_option("--vocab", t.task.vocab, "vocabulary size V (SEP=0, PAD=1, symbols 2..V-1)")->capture_default_str();
  app.add_option("--markov-order", t.task.markov_order, "markov: context length K")->capture_default_str();
  app.add_option("--markov-sharpness", t.task.markov_sharpness, "markov: P(.|c) = softmax(s*z), z ~ N(0,1)")
      ->capture_default_str();
  app.add_flag("--tie-embeddings", t.tie_embeddings, "output projection = token embedding");
  app.add_option("--steps", t.steps, "Adam updates S")->capture_default_str();
  app.add_option("--batch", t.batch, "sequences per update B")->capture_default_str();
  app.add_option("--schedule", t.schedule, "inverse-sqrt | linear | constant, after the linear warmup")->capture_default_str();
  app.add_option("--clip", t.clip, "clip the total gradient 2-norm to NORM (torch clip_grad_norm_; 0: off)")
      ->capture_default_str();
  app.add_option("--weight-decay", t.adam.weight_decay, "L2 added to the gradient, as torch.optim.Adam")
      ->capture_default_str();
  app.add_option("--log-every", t.log_every, "record the instrumentation every N steps (and at the last)")
      ->capture_default_str();
  app.add_option("--eval-size", t.eval_size, "held-out sequences for eval_loss and accuracy")->capture_default_str();
  app.add_option("--diverge-loss", t.diverge_loss, "divergence threshold on the train loss (0: 2*max(ln V, loss at step 0))")
      ->capture_default_str();
}

TrainConfig resolve_train(const TrainFlags& f, const std::string& placement, Index layers) {
  TrainConfig c = f.tc;
  c.model.placement = placement;
  c.model.layers = layers;
  c.model.causal = true;
  c.model.activation = parse_activation(f.activation);
  c.model.norm = parse_norm_kind(f.norm);
  if (f.no_final_norm) c.model.final_norm = false;
  c.model.scheme = scheme_values(f.scheme);
  find_placement(placement);
  c.init.scale_text = f.init_scale;
  c.init.scale = parse_init_scale(f.init_scale, layers);
  validate_train(c);
  return c;
}

}  // namespace gradflow::cli
