// cmd_export.cpp — `gradflow export --out model.safetensors [model options]`: the model's parameters (as
// `analyze` with the same options would use them) written as F64 safetensors in PyTorch's nn.TransformerEncoder
// state_dict naming, so `encoder.load_state_dict(tensors, strict=True)` reads them (docs/formats.md); with
// --format hf-bert|hf-roberta|hf-gpt2, a Hugging Face checkpoint folder (config.json + model.safetensors).
#include <filesystem>

#include "cli/commands.hpp"
#include "cli/model_options.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/io/checkpoint.hpp"
#include "gradflow/model/placement.hpp"
#include "gradflow/run/memory_estimate.hpp"
#include "gradflow/run/run_inputs.hpp"
#include "gradflow/io/safetensors.hpp"
#include "gradflow/report/atomic_file.hpp"

namespace gradflow::cli {
namespace {
struct ExportOptions {
  ModelSettings model;
  std::string out;
  std::string format = "torch-encoder";
  bool quiet = false;  // export prints nothing; -q is accepted like every other command's
};

void run_export(const ExportOptions& o) {
  const RunConfig rc = resolve(o.model);
  MemoryEstimate need;
  const double params = body_parameter_count(rc.model) * sizeof(double);
  need.add("parameters", params).add("their float64 copy for the file", params);
  add_checkpoint_kept(need, rc.analysis.checkpoint_bytes);
  if (find_placement(rc.model.placement).name() == "admin")  // Admin's profiling runs one forward pass on x_0
    need.add("forward trace", trace_doubles(rc.model, rc.analysis.seq_len) * sizeof(double));
  require_memory(need, rc.analysis.max_memory_bytes, "export", "lower --layers or --d-model, or raise --max-memory");
  const std::vector<NamedPath> inputs = run_input_paths(rc);
  if (o.format == "torch-encoder") {
    check_outputs({{"--out", o.out}}, inputs);
  } else {  // a folder: the two files it will hold must not be the inputs (e.g. the checkpoint just read)
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::exists(o.out, ec) && !fs::is_directory(o.out, ec))
      throw gradflow::Error("--out '" + o.out + "' is not a folder; fix: name a folder (created when missing) for --format " + o.format);
    fs::create_directories(o.out, ec);
    if (ec) throw gradflow::Error("cannot create the folder '" + o.out + "': " + ec.message() + "; fix: choose a writable path");
    std::vector<NamedPath> read = inputs;  // a --weights folder: the files in it are inputs too
    if (!rc.weights.empty() && fs::is_directory(rc.weights, ec))
      for (const char* f : {"model.safetensors", "config.json", "model.safetensors.index.json"})
        read.push_back({"--weights", (fs::path(rc.weights) / f).string()});
    check_outputs({{"--out", (fs::path(o.out) / "model.safetensors").string()},
                   {"--out", (fs::path(o.out) / "config.json").string()}}, read);
  }
  Model model(rc.model);
  prepare_run(rc, model);  // --init (and Admin's profiling on the input), or --weights
  if (o.format == "torch-encoder") write_safetensors(o.out, to_tensors(model.params()));
  else write_hf_checkpoint(o.out, o.format, to_tensors(model.params()), model.config());
}
}  // namespace

void setup_export(CLI::App& app) {
  auto opts = std::make_shared<ExportOptions>();
  auto* sub = app.add_subcommand("export", "write the initialized model's parameters as .safetensors (PyTorch names)");
  add_model_options(*sub, opts->model);
  sub->add_option("--out", opts->out, "output file (.safetensors, F64), or the folder of a Hugging Face --format")
      ->check(non_empty_path())
      ->required();
  sub->add_option("--format", opts->format,
                  "torch-encoder (nn.TransformerEncoder names) | hf-bert | hf-roberta | hf-gpt2 (a folder with "
                  "config.json and model.safetensors: the block stack in that family's names)")
      ->check(CLI::IsMember({"torch-encoder", "hf-bert", "hf-roberta", "hf-gpt2"}))
      ->capture_default_str();
  sub->add_flag("-q,--quiet", opts->quiet, "accepted for scripts that pass -q to every command (export prints nothing)");
  sub->callback([opts] { run_export(*opts); });
}

}  // namespace gradflow::cli
