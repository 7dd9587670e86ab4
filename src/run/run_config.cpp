// run_config.cpp — see run_config.hpp.
#include "gradflow/run/run_config.hpp"

#include "gradflow/io/checkpoint.hpp"
#include "gradflow/io/npy.hpp"
#include "gradflow/report/config_json.hpp"
#include "gradflow/report/fields.hpp"
#include "gradflow/run/run_inputs.hpp"

namespace gradflow {

namespace {

// What the files read hold, by SHA-256 (Checkpoint::sha256, NpyArray::sha256): a result is reused (--resume, a plan's
// task, merge) only when these match, whatever the files are called now (experiments/runner.cpp).
void add_input_digests(nlohmann::ordered_json& j, const RunConfig& rc) {
  if (rc.weights.empty() && rc.input.empty() && rc.cotangent.empty()) return;
  const std::shared_ptr<const RunFiles> files = load_run_files(rc);  // rc.files when it holds them
  if (files->weights) j["weights_sha256"] = files->weights->sha256;
  if (files->input) j["input_sha256"] = files->input->sha256;
  if (files->cotangent) j["cotangent_sha256"] = files->cotangent->sha256;
}

}  // namespace

nlohmann::ordered_json run_config_json(const Model& model, const RunConfig& rc, const EngineChoice* choice) {
  const AnalysisOptions& opts = rc.analysis;
  nlohmann::ordered_json j = model_config_json(model, rc.init, opts.seq_len);
  j[fields::kLoss] = opts.loss;
  j[fields::kMode] = choice ? to_string(choice->engine) : to_string(opts.engine_request);
  j["parameters"] = model.params().numel();
  if (opts.precision != Precision::F64) {  // absent at f64: today's reports unchanged
    j[fields::kPrecision] = to_string(opts.precision);
    if (opts.autocast) j["precision_regime"] = "autocast";  // absent: the model cast to the type
    j[fields::kLossScale] = opts.loss_scale.dynamic ? nlohmann::ordered_json("dynamic") : nlohmann::ordered_json(opts.loss_scale.value);
  }
  if (!choice) {  // the inputs by content; the ids are their own content
    add_input_digests(j, rc);
    if (!rc.token_ids.empty()) j["token_ids"] = rc.token_ids;
    return j;
  }
  j["mode_reason"] = choice->reason;
  j["explicit_memory_estimate_bytes"] = choice->explicit_bytes;
  j["max_memory_bytes"] = choice->budget_bytes;
  if (choice->streamed_considered)  // a measurement of this machine: "time" keeps it out of bit-for-bit comparisons
    j["time_estimate"] = {{"streamed_seconds", choice->streamed_seconds},
                          {"dgemm_flops_per_second", choice->dgemm_rate},
                          {"max_time_seconds", opts.max_time_seconds}};
  if (choice->engine == Engine::Explicit) j["spectrum"] = opts.spectrum;
  if (opts.backend != BackendKind::Cpu) j["device"] = to_string(opts.backend);  // absent: the CPU
  if (choice->engine == Engine::MatrixFree) {
    j["top_k"] = opts.top_k;
    j["spectral_layers"] = opts.spectral_layers;
    j["hutchinson_probes"] = opts.hutchinson_probes;
    j["probe_chunk"] = opts.probe_chunk;
  }
  if (choice->engine == Engine::Streamed) {
    j["stream_rows"] = opts.stream_rows;
    j["stream_blocks"] = opts.stream_blocks;
  }
  if (opts.sensitivity_probes > 0) {
    j[fields::kSensitivityProbes] = opts.sensitivity_probes;
    j[fields::kSensitivitySize] = opts.sensitivity_size;
  }
  for (const auto& [key, path] : {std::pair<const char*, const std::string&>{"weights", rc.weights},
                                  {"input", rc.input}, {"cotangent", rc.cotangent}})
    if (!path.empty()) j[key] = path;
  add_input_digests(j, rc);
  if (!rc.token_ids.empty()) {
    j["token_ids"] = rc.token_ids;
    if (!rc.token_ids_file.empty()) j["token_ids_file"] = rc.token_ids_file;
    j["input"] = "the token ids through the checkpoint's embeddings";
  }
  if (rc.files && rc.files->weights && rc.files->weights->format != "torch-encoder") {
    // a Hugging Face checkpoint: where each analyzed tensor came from, and what was left out
    const Checkpoint& ck = *rc.files->weights;
    j["weights_format"] = ck.format;
    if (!ck.config_path.empty()) j["weights_config"] = ck.config_path;
    nlohmann::ordered_json names = nlohmann::ordered_json::object();
    for (const SafeTensor& t : ck.tensors) names[t.name] = ck.source_names.at(t.name);
    j["weights_tensor_names"] = std::move(names);
    j["weights_not_analyzed"] = {
        {"note", "the analyzed model is the block stack (and the final norm when the checkpoint has one); the "
                 "embeddings, pooler and task heads are outside it, and dropout is off"},
        {"tensors", ck.outside}};
  }
  return j;
}

}  // namespace gradflow
