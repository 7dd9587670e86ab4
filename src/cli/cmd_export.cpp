// cmd_export.cpp — `gradflow export --out model.safetensors [model options]`: the model's parameters (as
// `analyze` with the same options would use them) written as F64 safetensors in PyTorch's nn.TransformerEncoder
// state_dict naming, so `encoder.load_state_dict(tensors, strict=True)` reads them (docs/formats.md); with
// --format hf-bert|hf-roberta|hf-gpt2|hf-llama|...|hf-neox, a Hugging Face checkpoint folder (config.json +
// model.safetensors).
// The work is the library's (run/model_files.hpp).
#include "cli/commands.hpp"
#include "gradflow/io/checkpoint.hpp"
#include "gradflow/run/model_options.hpp"
#include "gradflow/run/model_files.hpp"

namespace gradflow::cli {
namespace {
struct ExportOptions {
  ModelSettings model;
  std::string out;
  std::string format = "torch-encoder";
  bool quiet = false;  // export prints nothing; -q is accepted like every other command's
};
}  // namespace

void setup_export(CLI::App& app) {
  auto opts = std::make_shared<ExportOptions>();
  auto* sub = app.add_subcommand("export", "write the initialized model's parameters as .safetensors (PyTorch names)");
  add_model_options(*sub, opts->model);
  sub->add_option("--out", opts->out, "output file (.safetensors, F64), or the folder of a Hugging Face --format")
      ->check(non_empty_path())
      ->required();
  std::vector<std::string> formats(weights_formats().begin() + 1, weights_formats().end());  // all but "auto"
  std::string listed;
  for (size_t i = 1; i < formats.size(); ++i) listed += " | " + formats[i];
  sub->add_option("--format", opts->format,
                  "torch-encoder (nn.TransformerEncoder names)" + listed +
                      " (a folder with config.json and model.safetensors: the block stack in that family's names; "
                      "docs/formats.md)")
      ->check(CLI::IsMember(formats))
      ->capture_default_str();
  sub->add_flag("-q,--quiet", opts->quiet, "accepted for scripts that pass -q to every command (export prints nothing)");
  sub->callback([opts] { export_model(resolve(opts->model), opts->out, opts->format); });
}

}  // namespace gradflow::cli
