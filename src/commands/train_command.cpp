// train_command.cpp — see train_command.hpp.
#include "gradflow/commands/train_command.hpp"

#include "gradflow/core/max_threads.hpp"
#include "gradflow/report/path_option.hpp"

namespace gradflow {

void add_train_options(CLI::App& sub, TrainRequest& r) {
  sub.add_option("--placement", r.placement, "where the norm sits (see `gradflow placements`)")->capture_default_str();
  sub.add_option("--layers", r.layers, "number of blocks L")->capture_default_str();
  add_train_flags(sub, r.flags);
  add_model_option(sub, r.flags.model, "weights")
      ->description("start the blocks (and final norm) from a checkpoint: a GPT-2 folder or file (hf-gpt2) or a "
                    "torch-encoder state_dict; L, d, d_ff (and GPT-2's heads, activation, eps) come from it; the "
                    "task's embeddings and head are drawn from --seed as without it (docs/training.md)");
  add_model_option(sub, r.flags.model, "weights-format");
  auto& t = r.flags.tc;
  sub.add_option("--lr", t.lr, "peak learning rate")->capture_default_str();
  sub.add_option("--warmup", t.warmup, "linear warmup steps W")->capture_default_str();
  sub.add_option("--save-every", t.save_every, "write a safetensors checkpoint every K steps (and at the end)");
  sub.add_option("--checkpoint-dir", t.checkpoint_dir, "directory of the checkpoints (step_NNNNNN.safetensors + .input.npy)")
      ->check(non_empty_path());
  sub.add_flag("--save-batches", t.save_batches, "also write every step's batch (tokens, targets) as .npy into --checkpoint-dir");
  sub.add_option("--threads", t.threads, "OpenMP threads over a batch's sequences (0: all; results do not depend on it)")
      ->check(CLI::Range(0, kMaxThreads))
      ->capture_default_str();
}

TrainConfig resolve_train_request(const CLI::App& sub, const TrainRequest& r) {
  const bool from_weights = !r.flags.model.rc.weights.empty();
  const bool placement_given = sub.get_option("--placement")->count() > 0;
  const bool layers_given = sub.get_option("--layers")->count() > 0;
  // --placement only when given: otherwise the checkpoint's, --arch's, or the default (post, as r.placement's)
  return resolve_train(r.flags, !placement_given ? std::nullopt : std::optional<std::string>(r.placement),
                       from_weights && !layers_given ? std::nullopt : std::optional<Index>(r.layers));
}

}  // namespace gradflow
