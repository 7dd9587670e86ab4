// train.hpp — the library entry point behind `gradflow train`: trains a LanguageModel (lm.hpp) on a Task
// (tasks.hpp) with Adam (optim.hpp), logging every --log-every steps what `analyze` measures at initialization
// (per-layer ||dL/dx_l|| and parameter-gradient norms, same definitions), and returns the train report
// (docs/report-schema.md, "train report"; docs/training.md).
//
// Steps: for s = 0..S: draw batch s, forward + backward (the loss of the current weights); log when s % log_every
// == 0 or s == S; stop on divergence; when s < S apply update t = s + 1 with lr(t). So log entry s describes the
// model after s updates, and its lr and update ratios are those of the update that follows (none at s = S).
// Batches: the B sequences run in parallel (OpenMP); each gradient is added to the total in sequence order (omp ordered),
// so results are bitwise identical whatever the thread count.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "gradflow/io/checkpoint.hpp"
#include "gradflow/kernels/precision.hpp"
#include "gradflow/model/config.hpp"
#include "gradflow/run/memory_estimate.hpp"
#include "gradflow/train/optim.hpp"
#include "gradflow/train/tasks.hpp"

namespace gradflow {

struct TrainConfig {
  ModelConfig model;              // causal is forced on
  InitConfig init;                // init.seed: the one seed of weights, batches and (with +1) the eval set
  // --weights: the blocks and final norm start from this checkpoint (read once, its architecture already in
  // `model`); the embeddings and head are still drawn from init.seed. Null: every weight from --init.
  std::shared_ptr<const Checkpoint> weights;
  TaskConfig task;                // task.seq_len is the model's n
  bool tie_embeddings = false;    // --tie-embeddings
  long steps = 1000;              // --steps S
  long batch = 16;                // --batch B (sequences per step)
  long warmup = 0;                // --warmup W
  double lr = 1e-3;               // --lr
  std::string schedule = "inverse-sqrt";  // --schedule inverse-sqrt|linear|constant
  AdamOptions adam;               // --weight-decay (betas and eps fixed: 0.9, 0.98, 1e-9)
  double clip = 0;                // --clip NORM (0: off)
  long log_every = 10;            // --log-every
  long eval_size = 64;            // --eval-size: held-out sequences (from seed + 1000003)
  double diverge_loss = 0;        // --diverge-loss: threshold on the train loss (0: 2·max(ln V, loss at step 0))
  // --diverge-activation: a block output entry larger in magnitude is divergence. Default: float32's largest value
  // (the same run in single precision would have overflowed; LayerNorm stays exact far beyond it, docs/math.md).
  double diverge_activation = 3.4028234663852886e38;
  long save_every = 0;            // --save-every K: checkpoints at steps 0, K, 2K, ... and S (0: none)
  std::string checkpoint_dir;     // --checkpoint-dir DIR
  bool save_batches = false;      // --save-batches: DIR/batch_NNNNNN.tokens.npy (B, n+1) and .targets.npy (B, n; -1: none)
  int threads = 0;                // --threads: OpenMP threads over the sequences of a batch (0: all)
  double max_memory_bytes = 0;    // --max-memory: refuse a run estimated above it (train_memory; 0: half of RAM)
  bool progress = false;          // a line per log entry on stderr
  // coordinate statistics in every log entry: "coords" (coord_stats.hpp, over the batch's sequences) and, for the
  // update that follows, "update_ratios_by_role" ||Δθ||/||θ|| over the tensors of each role (gradflow coord-check)
  bool coord_stats = false;
  // --precision f32|bf16|f16: mixed-precision training (Micikevicius et al. 2018): float32 master weights and Adam;
  // each step's forward and backward run by the model cast to the type (lm.hpp, kernels/precision_kernels.hpp), its
  // gradients stored in the type, unscaled and rounded to float32 for the update; the eval loss by the cast model.
  // F64: the exact run (the default, bit for bit unchanged).
  Precision precision = Precision::F64;
  // --autocast bf16|f16: `precision` in autocast's regime instead (the step's model float32 but for its matrix
  // products and what follows them: kernels/precision_kernels.hpp's two sets; its gradients float32)
  bool autocast = false;
  LossScale loss_scale;           // --loss-scale S | dynamic (GradScaler's defaults, grad_scaler.hpp)
};

// Validates every option (Error naming the option and the fix) and refuses a run whose train_memory exceeds
// --max-memory; call before any output is created.
void validate_train(const TrainConfig& c);
// The threads over a batch's sequences: --threads (0: omp_get_max_threads()), never more than the batch holds.
int batch_threads(const TrainConfig& c);
// Estimated peak memory of one training run with `threads` threads over a batch (at most c.batch of them run):
// the body's and the embeddings' parameters with their total gradient, one gradient per thread and Adam's two
// moments; per thread one sequence's forward trace and logits; the checkpoint buffer when saving.
MemoryEstimate train_memory(const TrainConfig& c, int threads);
// Seed of the held-out evaluation set.
uint64_t eval_seed(uint64_t seed);
// The report's "config" for c (what a resumed train-sweep result must have been computed with).
nlohmann::ordered_json train_config_json(const TrainConfig& c);
// The train report: config, task {name, loss_floor, ...}, log [...], diverged, final {...}, timing.
nlohmann::ordered_json train(const TrainConfig& c);

}  // namespace gradflow
