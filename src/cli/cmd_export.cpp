// cmd_export.cpp — `gradflow export --out model.safetensors [model options]`: the model's parameters (as
// `analyze` with the same options would use them) written as F64 safetensors in PyTorch's nn.TransformerEncoder
// state_dict naming, so `encoder.load_state_dict(tensors, strict=True)` reads them (docs/formats.md).
#include "cli/commands.hpp"
#include "cli/model_options.hpp"
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
  bool quiet = false;  // export prints nothing; -q is accepted like every other command's
};

void run_export(const ExportOptions& o) {
  const RunConfig rc = resolve(o.model);
  check_outputs({{"--out", o.out}}, {{"--weights", rc.weights}, {"--input", rc.input}, {"--cotangent", rc.cotangent}});
  rc.model.validate();
  MemoryEstimate need;
  const double params = body_parameter_count(rc.model) * sizeof(double);
  need.add("parameters", params).add("their float64 copy for the file", params);
  if (find_placement(rc.model.placement).name() == "admin")  // Admin's profiling runs one forward pass on x_0
    need.add("forward trace", trace_doubles(rc.model, rc.analysis.seq_len) * sizeof(double));
  require_memory(need, rc.analysis.max_memory_bytes, "export", "lower --layers or --d-model, or raise --max-memory");
  Model model(rc.model);
  prepare_run(rc, model);  // --init (and Admin's profiling on the input), or --weights
  write_safetensors(o.out, to_tensors(model.params()));
}
}  // namespace

void setup_export(CLI::App& app) {
  auto opts = std::make_shared<ExportOptions>();
  auto* sub = app.add_subcommand("export", "write the initialized model's parameters as .safetensors (PyTorch names)");
  add_model_options(*sub, opts->model);
  sub->add_option("--out", opts->out, "output file (.safetensors, F64)")->check(non_empty_path())->required();
  sub->add_flag("-q,--quiet", opts->quiet, "accepted for scripts that pass -q to every command (export prints nothing)");
  sub->callback([opts] { run_export(*opts); });
}

}  // namespace gradflow::cli
