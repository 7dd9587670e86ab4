// analyze.hpp — the library entry point behind `gradflow analyze`: build a model from options, initialize
// it, run it on its input and return the whole report (config + every registered analysis).
// compare, sweep and the API example call this too.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gradflow/run/options.hpp"
#include "gradflow/model/config.hpp"

namespace gradflow {

struct Checkpoint;
struct NpyArray;
struct EngineChoice;
class RunBackend;

// The contents of a run's files, read once (run_inputs.hpp: load_run_files) and shared by every configuration
// built from the same options (compare and sweep read --weights once, not once per configuration).
struct RunFiles {
  std::string weights_path, weights_format, input_path, cotangent_path;  // what was read
  bool weights_embeddings = false;                         // the embeddings were read too (--token-ids)
  bool weights_head = false;                               // and an untied LM head (--loss lm)
  std::shared_ptr<const Checkpoint> weights;               // --weights (in gradflow's tensor names), or null
  std::shared_ptr<const NpyArray> input, cotangent;        // --input, --cotangent, or null
};

struct RunConfig {
  ModelConfig model;
  InitConfig init;
  AnalysisOptions analysis;
  // Files (empty: none). Call apply_file_sizes (run_inputs.hpp) first so the sizes above match them.
  std::string weights;    // --weights FILE.safetensors | DIR: a checkpoint (io/checkpoint.hpp)
  std::string weights_format = "auto";  // --weights-format auto|torch-encoder|hf-bert|hf-roberta|hf-gpt2
  std::string input;      // --input FILE.npy, (n, d) or (1, n, d): replaces the seeded input x_0
  std::string cotangent;  // --cotangent FILE.npy, the output's shape: replaces the seeded g of --loss dot
  std::vector<int64_t> token_ids;  // --token-ids 101,7592,102: x_0 from the checkpoint's embeddings (n = count)
  std::string token_ids_file;      // --token-ids FILE.npy: the file the ids came from ("" for a list)
  std::shared_ptr<const RunFiles> files;  // their contents once read (null: read them when needed)
};

// The full report (a run that does not fit in --max-memory is refused first: choose_engine, engine.hpp): {"config": ..., "layers": [...], "output_grad_norm": ..., "summary": {...}, ...}.
// Builds the run's one backend from rc.analysis.backend (backend.hpp: RunBackend).
nlohmann::ordered_json analyze(const RunConfig& rc);
// The same on the run's backend (of rc.analysis.backend's kind), built once for the engine choice, the context and
// the analyses. chosen: the engine choose_engine already made for rc on this backend (gradflow analyze checks its
// options against it first), or null to choose here.
nlohmann::ordered_json analyze(const RunConfig& rc, const RunBackend& backend, const EngineChoice* chosen = nullptr);

}  // namespace gradflow
