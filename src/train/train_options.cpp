// train_options.cpp — see train_options.hpp.
#include "gradflow/train/train_options.hpp"

#include "gradflow/core/error.hpp"


namespace gradflow {

void add_train_flags(CLI::App& app, TrainFlags& f) {
  auto& t = f.tc;
  add_model_options(app, f.model, /*training=*/true);  // architecture and initialization, as analyze's
  app.get_option("--causal")->description("causal attention mask: always on for training (accepted for symmetry with analyze)");
  app.get_option("--seed")->description("seed of weights and training batches (eval set: seed + 1000003)");
  app.add_option("--seq-len", t.task.seq_len, "positions n the model reads (the task fills them)")->capture_default_str();
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
  app.add_option("--diverge-activation", t.diverge_activation,
                 "divergence when a block output entry exceeds this magnitude (default: float32's largest; inf: off)")
      ->capture_default_str();
}

TrainConfig resolve_train(const TrainFlags& f, const std::optional<std::string>& placement, std::optional<Index> layers) {
  TrainConfig c = f.tc;
  ModelSettings s = f.model;
  if (placement) set_model_option(s, "placement", *placement);
  if (layers) set_model_option(s, "layers", std::to_string(*layers));
  s.rc.model.causal = true;  // next-token prediction
  const RunConfig rc = resolve(s);
  if (rc.files && rc.files->weights) {
    const Checkpoint& ck = *rc.files->weights;
    require(!ck.arch.causal || *ck.arch.causal,
            "--weights '" + ck.path + "' is a " + ck.format + " checkpoint, a bidirectional encoder, but train's tasks "
            "are next-token prediction under the causal mask, which would not be the model it was trained as; fix: "
            "train from a GPT-2 checkpoint (hf-gpt2) or a torch-encoder state_dict, or analyze this one");
    c.weights = rc.files->weights;
  }
  c.model = rc.model;
  c.init = rc.init;
  c.max_memory_bytes = rc.analysis.max_memory_bytes;
  c.precision = rc.analysis.precision;
  c.autocast = rc.analysis.autocast;
  c.loss_scale = rc.analysis.loss_scale;
  validate_train(c);
  return c;
}

}  // namespace gradflow
