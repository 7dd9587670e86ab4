// run_inputs.cpp — see run_inputs.hpp. Each file is read once (load_run_files); its sizes are applied before the
// model exists, its values after.
#include "gradflow/run/run_inputs.hpp"

#include "gradflow/core/error.hpp"
#include "gradflow/io/npy.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/run/memory_estimate.hpp"

namespace gradflow {

namespace {

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

std::vector<NamedPath> run_input_paths(const RunConfig& rc) {
  return {{"--weights", rc.weights}, {"--input", rc.input}, {"--cotangent", rc.cotangent},
          {"--token-ids", rc.token_ids_file}};
}

std::shared_ptr<const RunFiles> load_run_files(const RunConfig& rc) {
  const bool embeddings = !rc.token_ids.empty();
  if (rc.files && rc.files->weights_path == rc.weights && rc.files->weights_format == rc.weights_format &&
      rc.files->weights_embeddings == embeddings && rc.files->weights_head == (rc.analysis.loss == "lm") &&
      rc.files->input_path == rc.input &&
      rc.files->cotangent_path == rc.cotangent)
    return rc.files;
  auto f = std::make_shared<RunFiles>();
  f->weights_path = rc.weights;
  f->weights_format = rc.weights_format;
  f->weights_embeddings = embeddings;
  f->weights_head = rc.analysis.loss == "lm";
  f->input_path = rc.input;
  f->cotangent_path = rc.cotangent;
  if (!rc.weights.empty()) {
    // refused before any tensor data is read when the load alone would not fit (--max-memory)
    const auto guard = [&](const CheckpointLoad& load) {
      require_memory(checkpoint_load_memory(load), rc.analysis.max_memory_bytes,
                     "loading --weights '" + rc.weights + "' (" + load.format + ")",
                     "raise --max-memory, or free memory" +
                         std::string(embeddings ? " (the embeddings are read for --token-ids; --input avoids them)" : ""));
    };
    f->weights = std::make_shared<const Checkpoint>(
        read_checkpoint(rc.weights, rc.weights_format, embeddings, guard, rc.analysis.loss == "lm"));
  }
  if (!rc.input.empty()) f->input = std::make_shared<const NpyArray>(read_npy(rc.input));
  if (!rc.cotangent.empty()) f->cotangent = std::make_shared<const NpyArray>(read_npy(rc.cotangent));
  return f;
}

void apply_file_sizes(RunConfig& rc, const GivenSizes& given, const GivenArch& arch) {
  if (rc.analysis.loss == "lm") {
    require(rc.token_ids.size() >= 2, "--loss lm is the next-token loss over --token-ids, and needs at least two ids; "
                                      "fix: give --weights GPT2_DIR --token-ids ID,ID,... or use --loss dot");
  }
  require(rc.cotangent.empty() || rc.analysis.loss == "dot",
          "--cotangent gives the g of --loss dot, but --loss is '" + rc.analysis.loss +
              "'; fix: drop --cotangent or use --loss dot");
  require(rc.token_ids.empty() || !rc.weights.empty(),
          "--token-ids needs --weights (the checkpoint's embeddings turn the ids into x_0); fix: add --weights DIR");
  require(rc.token_ids.empty() || rc.input.empty(),
          "--token-ids and --input both give x_0; fix: drop one of them");
  rc.files = load_run_files(rc);
  if (!rc.weights.empty()) {
    apply_checkpoint(*rc.files->weights, given, arch, rc.model);
    rc.analysis.checkpoint_bytes = checkpoint_kept_bytes(*rc.files->weights);
  }
  if (rc.analysis.loss == "lm" && rc.files->weights->format != "hf-gpt2" && !rc.files->weights->arch.decoder)
    throw Error("--loss lm is a decoder's next-token loss through its LM head (GPT-2, Llama, Mistral, Qwen2, Qwen3, "
                "OLMo-2, Gemma-2, GPT-NeoX), but --weights is " + rc.files->weights->format +
                "; fix: use --loss dot or --loss half-sq");
  if (!rc.token_ids.empty()) {
    const Index n = static_cast<Index>(rc.token_ids.size());
    require(!given.seq_len || *given.seq_len == n,
            "--seq-len " + std::to_string(given.seq_len.value_or(0)) + " contradicts the " + std::to_string(n) +
                " ids of --token-ids; fix: drop --seq-len (the ids fix it)");
    (void)token_positions(*rc.files->weights, rc.token_ids);  // ids and positions checked before any estimate
    rc.analysis.seq_len = n;
    return;
  }
  if (rc.input.empty()) return;
  const NpyArray& a = *rc.files->input;
  const auto& s = a.shape;
  const bool ok = (s.size() == 2 || (s.size() == 3 && s[0] == 1)) && s[s.size() - 2] > 0 && s.back() > 0;
  require(ok, "npy file '" + rc.input + "' (--input): shape " + shape_str(s) +
                  " is not (n, d) or (1, n, d) with n, d > 0; fix: save the input tokens as an array of shape (n, d)");
  const Index n = s[s.size() - 2], d = s.back();
  if (d != rc.model.d_model) {
    const std::string by = !rc.weights.empty() ? "--weights '" + rc.weights + "'" : given.d_model ? "--d-model" : "";
    require(by.empty(), "npy file '" + rc.input + "' (--input): width d = " + std::to_string(d) + " but d_model is " +
                            std::to_string(rc.model.d_model) + " (from " + by + "); fix: save an input of shape (" +
                            std::to_string(n) + ", " + std::to_string(rc.model.d_model) + ")");
    rc.model.d_model = d;
  }
  require(!given.seq_len || *given.seq_len == n,
          "--seq-len " + std::to_string(given.seq_len.value_or(0)) + " contradicts the " + std::to_string(n) +
              " tokens of --input '" + rc.input + "'; fix: drop --seq-len (the input fixes it) or pass --seq-len " +
              std::to_string(n));
  rc.analysis.seq_len = n;
}

RunInputs prepare_run(const RunConfig& rc, Model& model) {
  const Index n = rc.analysis.seq_len, d = model.config().d_model;
  const std::shared_ptr<const RunFiles> files = load_run_files(rc);
  RunInputs r;
  if (!rc.token_ids.empty()) r.x0 = embed_tokens(*files->weights, rc.token_ids, model.config().embedding_scale());
  else
    r.x0 = rc.input.empty() ? random_normal(rc.init.seed, "input", n, d)
                            : npy_to_matrix(*files->input, n, d, "--input tokens x_0");
  if (rc.weights.empty()) {
    initialize(model, rc.init);
    profile_initialization(model, r.x0);  // Admin's ω (data-dependent init); no-op otherwise
  } else {
    load_checkpoint_params(*files->weights, model.params());
  }
  if (rc.analysis.loss == "lm") {  // through the untied head when the checkpoint has one, else the embedding
    const Checkpoint& ck = *files->weights;
    const SafeTensor* head = nullptr;
    for (const SafeTensor& t : ck.embeddings)
      if (t.name == "head" || (t.name == "word" && !head)) head = &t;
    require(head != nullptr, "internal: --loss lm without the checkpoint's head");
    r.lm_loss = next_token_loss(ConstMatMap(head->data.data(), head->shape[0], head->shape[1]), rc.token_ids, files,
                                ck.arch.final_softcap);
  }
  if (!rc.cotangent.empty()) {
    require(rc.analysis.loss == "dot", "--cotangent gives the g of --loss dot, but --loss is '" + rc.analysis.loss +
                                           "'; fix: drop --cotangent or use --loss dot");
    r.cotangent = npy_to_matrix(*files->cotangent, n, d, "--cotangent dL/dy, the output's shape");
  }
  return r;
}

}  // namespace gradflow
