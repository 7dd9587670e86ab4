// train.cpp — see train.hpp: the training loop, its instrumentation, divergence detection and checkpoints.
#include "gradflow/train/train.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

#include "gradflow/core/cancel.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/core/finite.hpp"
#include "gradflow/io/npy.hpp"
#include "gradflow/io/safetensors.hpp"
#include "gradflow/kernels/precision_kernels.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/model/placement.hpp"
#include "gradflow/report/atomic_file.hpp"
#include "gradflow/report/config_json.hpp"
#include "gradflow/report/fields.hpp"
#include "gradflow/report/gradient_profile.hpp"
#include "gradflow/train/grad_scaler.hpp"
#include "gradflow/train/lm.hpp"

namespace gradflow {
namespace {
using Json = nlohmann::ordered_json;


std::string step_name(long s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "step_%06ld", s);
  return buf;
}

void save_checkpoint(const LanguageModel& lm, const std::string& dir, long s, const Mat& x0) {
  std::vector<SafeTensor> tensors = to_tensors(lm.body().params());
  for (const auto& t : to_tensors(lm.io_params())) tensors.push_back(t);
  const auto base = (std::filesystem::path(dir) / step_name(s)).string();
  write_safetensors(base + ".safetensors", tensors);
  write_npy(base + ".input.npy", x0);
}

// The checkpoints this run writes (step_NNNNNN.safetensors and .input.npy at every saved step) must not be the
// files --weights was read from, nor the input saved beside such a file: a run starts again at step 0, so
// continuing in the folder of the checkpoint it started from would overwrite it.
void check_checkpoints_spare_weights(const TrainConfig& c) {
  std::vector<NamedPath> inputs;
  for (const std::string& f : c.weights->files) {
    inputs.push_back({"--weights", f});
    if (f.size() > 12 && f.compare(f.size() - 12, 12, ".safetensors") == 0)
      inputs.push_back({"--weights' saved input", f.substr(0, f.size() - 12) + ".input.npy"});
  }
  if (!c.weights->config_path.empty()) inputs.push_back({"--weights", c.weights->config_path});
  for (long s = 0;; s = std::min(s + c.save_every, c.steps)) {
    const auto base = (std::filesystem::path(c.checkpoint_dir) / step_name(s)).string();
    std::error_code ec;  // a step's files that do not exist yet cannot be a file --weights was read from
    if (std::filesystem::exists(base + ".safetensors", ec) || std::filesystem::exists(base + ".input.npy", ec))
      check_outputs({{"--checkpoint-dir's " + step_name(s) + ".safetensors", base + ".safetensors"},
                     {"--checkpoint-dir's " + step_name(s) + ".input.npy", base + ".input.npy"}},
                    inputs);
    if (s == c.steps) break;
  }
}

}  // namespace

uint64_t eval_seed(uint64_t seed) { return seed + 1000003ULL; }

void validate_train(const TrainConfig& c) {
  ModelConfig m = c.model;
  m.causal = true;
  m.validate();
  validate_task(c.task);
  validate_schedule(c.schedule);
  require(c.steps >= 0, "--steps must be >= 0 (got " + std::to_string(c.steps) + "); fix: e.g. --steps 1000");
  require(c.batch >= 1, "--batch must be >= 1 (got " + std::to_string(c.batch) + "); fix: e.g. --batch 16");
  require(c.warmup >= 0, "--warmup must be >= 0 (got " + std::to_string(c.warmup) + "); fix: e.g. --warmup 100");
  require(std::isfinite(c.lr) && c.lr > 0, "--lr must be a positive number; fix: e.g. --lr 1e-3");
  require(std::isfinite(c.clip) && c.clip >= 0, "--clip must be >= 0 (0: no clipping); fix: e.g. --clip 1");
  require(std::isfinite(c.adam.weight_decay) && c.adam.weight_decay >= 0,
          "--weight-decay must be >= 0; fix: e.g. --weight-decay 0.01");
  require(c.log_every >= 1, "--log-every must be >= 1 (got " + std::to_string(c.log_every) + "); fix: e.g. --log-every 10");
  require(c.eval_size >= 1, "--eval-size must be >= 1; fix: e.g. --eval-size 64");
  require(std::isfinite(c.diverge_loss) && c.diverge_loss >= 0,
          "--diverge-loss must be >= 0 (0: 2 ln V); fix: e.g. --diverge-loss 10");
  require(c.diverge_activation > 0, "--diverge-activation must be > 0 (inf: off); fix: e.g. --diverge-activation 1e30");
  require(c.save_every >= 0, "--save-every must be >= 0 (0: no checkpoints); fix: e.g. --save-every 100");
  require(!c.save_batches || !c.checkpoint_dir.empty(),
          "--save-batches needs a directory; fix: add --checkpoint-dir DIR");
  require(c.save_every == 0 || !c.checkpoint_dir.empty(),
          "--save-every needs a directory for the checkpoints; fix: add --checkpoint-dir DIR");
  require(c.threads >= 0, "--threads must be >= 0 (0: every core); fix: e.g. --threads 2");
  require(c.precision != Precision::F64 || (!c.loss_scale.dynamic && c.loss_scale.value == 1.0),
          "--loss-scale scales the backward pass of a --precision run; fix: add --precision f16 (or bf16, f32) or drop "
          "--loss-scale");
  c.model.validate();
  require_memory(train_memory(c, batch_threads(c)), c.max_memory_bytes, "training",
                 "lower --layers, --d-model, --seq-len or --vocab, use fewer --threads, or raise --max-memory");
}

int batch_threads(const TrainConfig& c) {
  return static_cast<int>(std::min<long>(c.threads > 0 ? c.threads : omp_get_max_threads(), c.batch));
}

MemoryEstimate train_memory(const TrainConfig& c, int threads) {
  const double d = static_cast<double>(c.model.d_model), V = static_cast<double>(c.task.vocab);
  const double n = static_cast<double>(c.task.seq_len);  // positions the model reads
  const double io = V * d + n * d + (c.tie_embeddings ? 0.0 : V * d);
  const double P = body_parameter_count(c.model) + io;
  const double T = static_cast<double>(std::clamp<long>(threads, 1, std::max<long>(c.batch, 1)));
  MemoryEstimate m;
  m.add("parameters", P * sizeof(double));
  m.add("gradients (total and one per thread)", (1 + T) * P * sizeof(double));
  m.add("Adam moments", 2 * P * sizeof(double));
  m.add("forward traces (one sequence per thread)",
        T * (trace_doubles(c.model, static_cast<Index>(n)) + 2 * n * V) * sizeof(double));
  if (c.save_every > 0) m.add("checkpoint buffer", P * sizeof(double));
  if (c.precision != Precision::F64) {  // the cast model's weights; per thread the float32 operands of its products
    const double ff = static_cast<double>(c.model.ff());
    m.add("the model cast to --precision", P * sizeof(double));
    m.add("float32 product operands (per thread)", T * (n * V + V * d + n * d + d * ff + n * ff) * sizeof(float));
  }
  if (c.weights) add_checkpoint_kept(m, checkpoint_kept_bytes(*c.weights));
  return m;
}

namespace {
// The batch's coordinate statistics (coord_stats.hpp): per block and the output logits, mean |entry|.
Json coords_json(const std::vector<SeqProbe>& probes) {
  CoordStats s;
  for (const auto& p : probes) s.add(p.coords);
  const auto means = [](const std::vector<MeanAbs>& v) {
    Json a = Json::array();
    for (const auto& m : v) a.push_back(finite_or_null(m.mean()));
    return a;
  };
  return Json{{"stream", means(s.stream)}, {"attn_branch", means(s.attn_branch)}, {"ffn_branch", means(s.ffn_branch)},
              {"attn_logits", means(s.attn_logits)}, {"output_logits", finite_or_null(s.output_logits.mean())}};
}
}  // namespace

Json train_config_json(const TrainConfig& c0) {
  TrainConfig c = c0;
  c.model.causal = true;
  const LanguageModel lm(c.model, c.task.vocab, c.task.seq_len, c.tie_embeddings);
  const uint64_t seed = c.init.seed;
  Json cfg = model_config_json(lm.body(), c.init, c.task.seq_len);
  if (c.weights) {
    cfg["weights"] = c.weights->path;
    cfg["weights_format"] = c.weights->format;
    cfg["weights_sha256"] = c.weights->sha256;  // a resumed run is reused only for the same checkpoint
    cfg["weights_loaded"] = "the blocks and final norm from the checkpoint; the task's embeddings and head drawn from "
                            "the seed (nn.Embedding / nn.Linear defaults)";
  }
  cfg["loss"] = "cross-entropy";
  cfg["parameters"] = static_cast<Index>(lm.body().params().numel() + lm.io_params().numel());
  cfg["task"] = c.task.name;
  if (c.task.name == "markov") {
    cfg["markov_order"] = c.task.markov_order;
    cfg["markov_sharpness"] = c.task.markov_sharpness;
  }
  cfg["vocab"] = c.task.vocab;
  cfg["tie_embeddings"] = c.tie_embeddings;
  cfg["steps"] = c.steps;
  cfg["batch"] = c.batch;
  cfg["lr"] = c.lr;
  cfg["warmup"] = c.warmup;
  cfg["schedule"] = c.schedule;
  cfg["optimizer"] = Json{{"name", "adam"}, {"beta1", c.adam.beta1}, {"beta2", c.adam.beta2}, {"eps", c.adam.eps},
                          {"weight_decay", c.adam.weight_decay}, {"weight_decay_kind", "l2 (torch.optim.Adam)"}};
  if (c.model.param.scales_width()) {  // the parametrization's Adam multipliers (absent under sp)
    const ParametrizationFactors f = c.model.factors();
    const ParamRole w = ParamRole::Linear1Weight, b = ParamRole::Linear1Bias;
    cfg["optimizer"]["multipliers"] = Json{
        {"hidden_weights", Json{{"lr", f.lr(w, true)}, {"eps", f.eps(true)}, {"weight_decay", f.weight_decay(w)}}},
        {"block_vectors", Json{{"lr", f.lr(b, true)}, {"eps", f.eps(true)}, {"weight_decay", f.weight_decay(b)}}},
        {"embeddings_readout_final_norm", Json{{"lr", 1.0}, {"eps", 1.0}, {"weight_decay", 1.0}}}};
  }
  cfg["clip"] = c.clip > 0 ? Json(c.clip) : Json(nullptr);
  if (c.precision != Precision::F64) {  // absent in the exact run (its reports unchanged)
    const GradScalerOptions g;
    Json scale = c.loss_scale.dynamic
                     ? Json{{"dynamic", "GradScaler"}, {"init_scale", g.init_scale}, {"growth_factor", g.growth_factor},
                            {"backoff_factor", g.backoff_factor}, {"growth_interval", g.growth_interval}}
                     : Json(c.loss_scale.value);
    cfg["precision"] = Json{{"type", to_string(c.precision)},
                            {"regime", c.autocast ? "autocast: float32 master weights, Adam, stream, norms, softmax and "
                                                    "loss; matrix products and what follows them in the type "
                                                    "(docs/training.md)"
                                                  : "mixed: float32 master weights and Adam; forward and backward by "
                                                    "the model cast to the type, float32 products (docs/training.md)"},
                            {"loss_scale", std::move(scale)}};
  }
  cfg["log_every"] = c.log_every;
  cfg["eval_size"] = c.eval_size;
  cfg["eval_seed"] = eval_seed(seed);
  cfg["diverge_loss"] = c.diverge_loss > 0 ? Json(c.diverge_loss) : Json("auto: 2*max(ln V, train loss at step 0)");
  cfg["diverge_activation"] = std::isfinite(c.diverge_activation) ? Json(c.diverge_activation) : Json("off");
  if (c.save_every > 0) {
    cfg["save_every"] = c.save_every;
    cfg["checkpoint_dir"] = c.checkpoint_dir;
  }
  return cfg;
}

Json train(const TrainConfig& c0) {
  const auto t_start = std::chrono::steady_clock::now();
  TrainConfig c = c0;
  c.model.causal = true;  // next-token prediction: the blocks always run with the causal mask
  validate_train(c);
  const uint64_t seed = c.init.seed;
  const Task task(c.task, seed);
  LanguageModel lm(c.model, c.task.vocab, c.task.seq_len, c.tie_embeddings);
  lm.initialize(c.init);
  if (c.weights) load_checkpoint_params(*c.weights, lm.body().params());  // the blocks; embeddings and head stay
  else profile_initialization(lm.body(), lm.embed(task.sample(seed, "train-step-0", 0).tokens));  // Admin only
  const std::vector<Sequence> eval_set = task.batch(eval_seed(seed), "eval", c.eval_size);
  if (c.save_every > 0 || c.save_batches) {
    std::error_code ec;
    std::filesystem::create_directories(c.checkpoint_dir, ec);
    require(std::filesystem::is_directory(c.checkpoint_dir),
            "--checkpoint-dir '" + c.checkpoint_dir + "' cannot be created; fix: choose a writable directory");
    if (c.weights && c.save_every > 0) check_checkpoints_spare_weights(c);
  }

  // --precision: the master weights in float32, and the model cast to the type that runs each step
  const bool low = c.precision != Precision::F64;
  // (--autocast: the step's model keeps float32 weights and runs on autocast's two kernel sets)
  ModelKernels step_kernels;
  std::unique_ptr<LanguageModel> cast;
  if (low) {
    lm.round_params(Precision::F32);
    step_kernels = make_model_kernels(c.precision, c.autocast, lm.body().kernels());
    cast = std::make_unique<LanguageModel>(c.model, c.task.vocab, c.task.seq_len, c.tie_embeddings,
                                           *step_kernels.main, c.precision, step_kernels.branch.get());
  }
  const LanguageModel& runner = low ? *cast : lm;  // the model whose passes a step runs
  GradScaler scaler(low ? c.loss_scale : LossScale{});

  const Index L = lm.body().layers();
  // divergence threshold: --diverge-loss, or 2·max(ln V, the loss at step 0) (set at step 0)
  double threshold = c.diverge_loss > 0 ? c.diverge_loss : 2.0 * std::log(static_cast<double>(c.task.vocab));
  // every tensor, the Model's first; its group for update ratios: "layers.{l}" or the tensor's own name
  std::vector<Mat*> params;
  std::vector<std::string> names, groups;
  std::vector<int> layer_of;  // l, or -1 outside the blocks
  std::vector<AdamScale> scales;  // the parametrization's multipliers per tensor (all 1 under sp)
  std::vector<ParamRole> roles;
  const ParametrizationFactors pf = lm.body().config().factors();
  for (auto& p : lm.body().params().all()) {
    params.push_back(&p.value);
    names.push_back(p.name);
    const int l = static_cast<int>(lm.body().block_of_param(static_cast<int>(names.size()) - 1));
    layer_of.push_back(l);
    groups.push_back(l >= 0 ? "layers." + std::to_string(l) : p.name);
    scales.push_back({pf.lr(p.role, l >= 0), pf.eps(l >= 0), pf.weight_decay(p.role)});
    roles.push_back(p.role);
  }
  for (auto& p : lm.io_params().all()) {
    params.push_back(&p.value);
    names.push_back(p.name);
    layer_of.push_back(-1);
    groups.push_back(p.name);
    scales.push_back({pf.lr(p.role, false), pf.eps(false), pf.weight_decay(p.role)});
    roles.push_back(p.role);
  }
  AdamOptions adam_options = c.adam;
  if (low) adam_options.storage = Precision::F32;
  Adam adam(params, adam_options, scales);
  const int threads = batch_threads(c);  // as many as validate_train's memory estimate counts
  // one gradient buffer per thread (not per sequence): each sequence's gradient is computed fresh in its thread's
  // buffer and added to the total in sequence order (omp ordered), so the sum is ((g_0 + g_1) + g_2) + ... whatever
  // the thread count, with memory for `threads` copies of the parameters only
  std::vector<LmGrads> per_thread(static_cast<size_t>(threads), lm.make_grads());
  LmGrads total = lm.make_grads();
  std::vector<Mat*> grad_ptrs;
  for (size_t i = 0; i < total.body.size(); ++i) grad_ptrs.push_back(&total.body[static_cast<int>(i)]);
  for (size_t i = 0; i < total.io.size(); ++i) grad_ptrs.push_back(&total.io[static_cast<int>(i)]);
  const std::vector<const Mat*> grad_cptrs(grad_ptrs.begin(), grad_ptrs.end());

  Json log = Json::array();
  Json diverged = nullptr;
  double eval_seconds = 0;
  double last_train = NAN, last_eval = NAN, last_acc = NAN;
  long done = 0;
  for (long s = 0; s <= c.steps; ++s) {
    check_cancel();  // a front end asked to stop (core/cancel.hpp): between steps, outside the batch's threads
    const std::vector<Sequence> batch = task.batch(seed, "train-step-" + std::to_string(s), c.batch);
    long T = 0;
    for (const auto& q : batch)
      for (int t : q.targets) T += t >= 0;
    require(T > 0, "the batch holds no target position; fix: a longer --seq-len");
    if (c.save_batches) {
      const size_t n1 = static_cast<size_t>(c.task.seq_len) + 1;
      std::vector<double> tok, tgt;
      for (const auto& q : batch) {
        tok.insert(tok.end(), q.tokens.begin(), q.tokens.end());
        tgt.insert(tgt.end(), q.targets.begin(), q.targets.end());
      }
      const auto base = (std::filesystem::path(c.checkpoint_dir) / ("batch_" + step_name(s).substr(5))).string();
      write_npy(base + ".tokens.npy", tok.data(), {c.batch, static_cast<int64_t>(n1)});
      write_npy(base + ".targets.npy", tgt.data(), {c.batch, static_cast<int64_t>(n1 - 1)});
    }
    std::vector<SeqLoss> losses(batch.size());
    std::vector<SeqProbe> probes(batch.size());
    for (auto& p : probes) {
      p.activation_bound = c.diverge_activation;
      p.want_coords = c.coord_stats;
    }
    total.zero();
    if (low) cast->copy_params_rounded(lm);
    const double S = scaler.scale();  // the loss scale of this step's backward pass (1: none)
#pragma omp parallel for ordered schedule(static, 1) num_threads(threads)
    for (long i = 0; i < c.batch; ++i) {
      LmGrads& g = per_thread[static_cast<size_t>(omp_get_thread_num())];
      g.zero();
      losses[static_cast<size_t>(i)] = runner.forward_backward(batch[static_cast<size_t>(i)], S / static_cast<double>(T),
                                                               g, &probes[static_cast<size_t>(i)]);
#pragma omp ordered
      total.add(g);  // in sequence order: bitwise identical whatever the thread count
    }
    if (low) {  // the batch's gradient as stored (.grad: the type, float32 under autocast), then unscaled into float32
      for (Mat* g : grad_ptrs) {  // (GradScaler.unscale_)
        round_in_place(stored_type(c.precision, c.autocast), *g);
        if (S != 1.0) *g /= S;
        round_in_place(Precision::F32, *g);
      }
    }
    double loss_sum = 0;
    long correct = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
      loss_sum += losses[i].loss_sum;
      correct += losses[i].correct;
    }
    const double train_loss = loss_sum / static_cast<double>(T);
    last_train = train_loss;
    if (s == 0 && c.diverge_loss <= 0 && std::isfinite(train_loss)) threshold = std::max(threshold, 2.0 * train_loss);

    // divergence: NaN/Inf anywhere, an activation above --diverge-activation, or the loss above the threshold
    int bad_fwd = -2, bad_bwd = -2;
    bool found_inf = false;
    bool bad_fwd_finite = false;
    for (const auto& p : probes) {
      if (p.bad_forward_layer != -2 && (bad_fwd == -2 || (p.bad_forward_layer >= 0 && (bad_fwd < 0 || p.bad_forward_layer < bad_fwd)))) {
        bad_fwd = p.bad_forward_layer;
        bad_fwd_finite = p.bad_forward_finite;
      }
      if (p.bad_backward_layer != -2 && p.bad_backward_layer > bad_bwd) bad_bwd = p.bad_backward_layer;
    }
    bool grads_finite = true;
    for (const Mat* g : grad_cptrs) grads_finite = grads_finite && all_finite(*g);
    if (bad_fwd != -2) {
      diverged = Json{{"step", s}, {"layer", bad_fwd >= 0 ? Json(bad_fwd) : Json(L - 1)},
                      {"quantity", bad_fwd >= 0 ? "activation" : "output"}};
      if (bad_fwd_finite) diverged["bound"] = c.diverge_activation;
    } else if (!std::isfinite(train_loss)) {
      diverged = Json{{"step", s}, {"layer", nullptr}, {"quantity", "loss"}};
    } else if ((bad_bwd != -2 || !grads_finite) && scaler.dynamic()) {
      found_inf = true;  // GradScaler: the step is skipped and the scale backs off, not a divergence
    } else if (bad_bwd != -2 || !grads_finite) {
      diverged = Json{{"step", s}, {"layer", bad_bwd >= 0 ? Json(bad_bwd) : Json(nullptr)}, {"quantity", "gradient"}};
    } else if (train_loss > threshold) {
      diverged = Json{{"step", s}, {"layer", nullptr}, {"quantity", "loss"}, {"threshold", threshold}};
    }

    const bool log_now = s % c.log_every == 0 || s == c.steps || !diverged.is_null();
    const bool update = s < c.steps && diverged.is_null();
    const double lr = update ? scheduled_lr(c.schedule, c.lr, c.warmup, c.steps, s + 1) : NAN;
    // a dynamic loss scale moves after every step that would update (and skips it on Inf/NaN), as GradScaler.update
    const bool skipped = update && scaler.update(found_inf);
    const bool apply = update && !skipped;
    Json entry;
    std::vector<double> before_sq;
    if (log_now) {
      const auto te = std::chrono::steady_clock::now();
      std::vector<SeqLoss> ev(eval_set.size());
#pragma omp parallel for schedule(static) num_threads(threads)
      for (long i = 0; i < static_cast<long>(eval_set.size()); ++i)
        ev[static_cast<size_t>(i)] = runner.evaluate(eval_set[static_cast<size_t>(i)]);
      double esum = 0;
      long et = 0, ec = 0;
      for (const auto& e : ev) {
        esum += e.loss_sum;
        et += e.targets;
        ec += e.correct;
      }
      eval_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - te).count();
      last_eval = esum / static_cast<double>(et);
      last_acc = static_cast<double>(ec) / static_cast<double>(et);
      entry["step"] = s;
      entry["train_loss"] = finite_or_null(train_loss);
      entry["eval_loss"] = finite_or_null(last_eval);
      entry["lr"] = finite_or_null(lr);
      entry["accuracy"] = finite_or_null(last_acc);
      entry["train_accuracy"] = static_cast<double>(correct) / static_cast<double>(T);
      double gsq = 0;
      for (const Mat* g : grad_cptrs) gsq += g->squaredNorm();
      entry["grad_norm_total"] = finite_or_null(std::sqrt(gsq));
      std::vector<double> grad_norms;
      for (Index l = 0; l < L; ++l) {
        double sq = 0;
        for (const auto& p : probes) sq += p.dx_sq[static_cast<size_t>(l)];
        grad_norms.push_back(std::sqrt(sq) / S);  // unscaled (S = 1 but with --loss-scale)
      }
      std::vector<ParamGradNorm> pnorms;
      for (size_t i = 0; i < names.size(); ++i) pnorms.push_back({&names[i], layer_of[i], grad_cptrs[i]->stableNorm()});
      Json layers = Json::array();
      entry["head_param_grad_norms"] = write_gradient_profile(grad_norms, pnorms, layers);
      double top_sq = 0;
      for (const auto& p : probes) top_sq += p.dx_sq[static_cast<size_t>(L)];
      entry[fields::kOutputGradNorm] = finite_or_null(std::sqrt(top_sq) / S);
      // RMS of each norm's input over every token of the batch
      Json final_rms = nullptr;
      for (size_t k = 0; k < lm.norm_names().size(); ++k) {
        double sq = 0, tok = 0;
        for (const auto& p : probes) {
          sq += p.norm_sq[k];
          tok += p.norm_tokens;
        }
        const double rms = std::sqrt(sq / tok);
        const int l = lm.norm_layers()[k];
        if (l < 0) {
          final_rms = finite_or_null(rms);
        } else {
          const std::string nm = lm.norm_names()[k].substr(Model::layer_prefix(l).size());
          layers[static_cast<size_t>(l)]["norm_input_rms"][nm] = finite_or_null(rms);
        }
      }
      entry["layers"] = std::move(layers);
      entry["final_norm_input_rms"] = final_rms;
      entry[fields::kBottomToTopGradRatio] = finite_or_null(bottom_to_top_ratio(grad_norms));
      entry["diverged"] = diverged;
      if (low) {
        entry["loss_scale"] = S;
        if (scaler.dynamic()) entry["skipped"] = skipped;
      }
      if (c.coord_stats) entry["coords"] = coords_json(probes);
      if (apply) {
        before_sq.resize(params.size());
        for (size_t i = 0; i < params.size(); ++i) before_sq[i] = params[i]->squaredNorm();
      }
      if (c.progress) {  // the last line (no update follows it) has no learning rate to show
        std::fprintf(stderr, "gradflow: step %ld/%ld  train %.4f  eval %.4f  acc %.3f", s, c.steps, train_loss,
                     last_eval, last_acc);
        if (std::isfinite(lr)) std::fprintf(stderr, "  lr %.3g", lr);
        std::fprintf(stderr, "\n");
      }
    }
    if (c.save_every > 0 && (s % c.save_every == 0 || s == c.steps) && diverged.is_null())
      save_checkpoint(lm, c.checkpoint_dir, s, lm.embed(eval_set[0].tokens));
    if (apply) {
      bool clipped = false;
      if (c.clip > 0) {
        const double n = clip_grad_norm(grad_ptrs, c.clip);
        clipped = c.clip / (n + 1e-6) < 1.0;
        if (low && clipped)
          for (Mat* g : grad_ptrs) round_in_place(Precision::F32, *g);  // the clipped float32 gradients
      }
      std::vector<double> delta_sq;
      adam.step(grad_cptrs, lr, log_now ? &delta_sq : nullptr);
      ++done;
      if (log_now) {
        entry["clipped"] = clipped;
        std::map<std::string, std::pair<double, double>> g;  // group -> (Σ||Δ||², Σ||θ||²)
        for (size_t i = 0; i < params.size(); ++i) {
          g[groups[i]].first += delta_sq[i];
          g[groups[i]].second += before_sq[i];
        }
        Json ratios = Json::object();
        for (size_t i = 0; i < params.size(); ++i) {  // store order
          if (ratios.contains(groups[i])) continue;
          const auto& [d2, p2] = g[groups[i]];
          ratios[groups[i]] = finite_or_null(p2 > 0 ? std::sqrt(d2 / p2) : NAN);
        }
        for (Index l = 0; l < L; ++l)
          entry["layers"][static_cast<size_t>(l)]["update_ratio"] = ratios["layers." + std::to_string(l)];
        entry["update_ratios"] = std::move(ratios);
        if (c.coord_stats) {
          std::map<std::string, std::pair<double, double>> by_role;  // role -> (Σ||Δ||², Σ||θ||²)
          for (size_t i = 0; i < params.size(); ++i) {
            by_role[to_string(roles[i])].first += delta_sq[i];
            by_role[to_string(roles[i])].second += before_sq[i];
          }
          Json r = Json::object();
          for (const auto& [role, v] : by_role) r[role] = finite_or_null(v.second > 0 ? std::sqrt(v.first / v.second) : NAN);
          entry["update_ratios_by_role"] = std::move(r);
        }
      }
    }
    if (log_now) log.push_back(std::move(entry));
    if (!diverged.is_null()) break;
  }

  Json report;
  report["config"] = train_config_json(c);
  Json tj;
  tj["name"] = c.task.name;
  tj["vocab"] = c.task.vocab;
  tj["seq_len"] = c.task.seq_len;
  if (c.task.name == "markov") {
    tj["markov_order"] = c.task.markov_order;
    tj["markov_sharpness"] = c.task.markov_sharpness;
  }
  tj["loss_floor"] = task.loss_floor();
  tj["loss_floor_meaning"] = c.task.name == "markov" ? "entropy rate of the chain (nats per target token)"
                                                     : "0: the answer is a function of the input";
  report["task"] = std::move(tj);
  report["log"] = std::move(log);
  report["diverged"] = diverged;
  report["divergence_threshold"] = threshold;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  report["final"] = Json{{"updates", done}, {"train_loss", finite_or_null(last_train)}, {"eval_loss", finite_or_null(last_eval)},
                         {"accuracy", finite_or_null(last_acc)}, {"eval_loss_above_floor", finite_or_null(last_eval - task.loss_floor())}};
  if (low) {
    report["final"]["loss_scale"] = scaler.scale();
    report["final"]["skipped_steps"] = scaler.skipped();
  }
  report["elapsed_seconds"] = elapsed;
  report["timing_seconds"] = Json{{"eval", eval_seconds}, {"train", elapsed - eval_seconds},
                                  {"updates_per_second", done > 0 ? Json(done / (elapsed - eval_seconds)) : Json(nullptr)}};
  return report;
}

}  // namespace gradflow
