// model_files.cpp — see model_files.hpp.
#include "gradflow/run/model_files.hpp"

#include <filesystem>

#include "gradflow/core/error.hpp"
#include "gradflow/core/finite.hpp"
#include "gradflow/io/checkpoint.hpp"
#include "gradflow/io/csv.hpp"
#include "gradflow/io/npy.hpp"
#include "gradflow/io/safetensors.hpp"
#include "gradflow/model/placement.hpp"
#include "gradflow/report/atomic_file.hpp"
#include "gradflow/run/context.hpp"
#include "gradflow/run/engine.hpp"
#include "gradflow/run/memory_estimate.hpp"
#include "gradflow/run/numeric_fix.hpp"
#include "gradflow/run/run_inputs.hpp"

namespace gradflow {

namespace {

// Dense Jacobians: refused up front (memory, engine options) when they do not fit.
// The run's one backend (backend.hpp: RunBackend) serves the choice and the context.
// --precision and --loss-scale are analyze's (the gradients at a low precision): refused by the commands that take
// the model options but compute no gradients, rather than ignored
void refuse_precision(const RunConfig& rc, const std::string& command) {
  const bool scaled = rc.analysis.loss_scale.dynamic || rc.analysis.loss_scale.value != 1.0;
  require(rc.analysis.precision == Precision::F64 && !scaled,
          (scaled && rc.analysis.precision == Precision::F64 ? "--loss-scale" : precision_option(rc.analysis)) +
              " is analyze's (the gradients at a low precision against float64's), not " + command +
              "'s, which writes float64 values; fix: drop it, or use gradflow analyze --precision");
}

RunConfig explicit_run(RunConfig rc, const RunBackend& backend) {
  refuse_precision(rc, "jacobian");
  rc.analysis.engine_request = EngineRequest::Explicit;
  choose_engine(rc.model, rc.analysis, backend);
  return rc;
}

Mat jacobian_of(const RunConfig& rc, const RunBackend& backend, Index from, std::optional<Index> to) {
  Model model(rc.model);
  const RunInputs in = prepare_run(rc, model);  // --weights/--input/--cotangent, or --init and seeded draws
  return with_nonfinite_fix(rc, in.x0, [&] {
    const AnalysisContext ctx(model, in.x0, rc.analysis, backend.get(), in.cotangent_or_null(), rc.init.seed,
                              in.lm_loss_or_null());
    Mat j = ctx.jacobian_between(from, to.value_or(model.layers()));
    if (!all_finite(j))
      throw Error("NaN/Inf in the Jacobian dx_" + std::to_string(to.value_or(model.layers())) + "/dx_" +
                      std::to_string(from) + "; fix: " + std::string(kNonFiniteFix), ErrorKind::Numeric);
    return j;
  });
}

}  // namespace

Mat model_jacobian(RunConfig rc, Index from, std::optional<Index> to) {
  const RunBackend backend(rc.analysis.backend);
  return jacobian_of(explicit_run(std::move(rc), backend), backend, from, to);
}

void write_model_jacobian(const RunConfig& rc, Index from, std::optional<Index> to, const std::string& out,
                          const std::string& format_given) {
  const RunBackend backend(rc.analysis.backend);
  const RunConfig run = explicit_run(rc, backend);
  std::string format = format_given;
  if (format.empty()) format = out.size() >= 4 && out.substr(out.size() - 4) == ".csv" ? "csv" : "npy";
  require(format == "npy" || format == "csv", "--format '" + format + "' is unknown; fix: use --format npy or csv");
  check_outputs({{"--out", out}}, run_input_paths(run));
  const Mat J = jacobian_of(run, backend, from, to);
  if (format == "npy") write_npy(out, J);
  else write_csv(out, J);
}

void export_model(const RunConfig& rc, const std::string& out, const std::string& format) {
  refuse_precision(rc, "export");
  MemoryEstimate need;
  const double params = body_parameter_count(rc.model) * sizeof(double);
  need.add("parameters", params).add("their float64 copy for the file", params);
  add_checkpoint_kept(need, rc.analysis.checkpoint_bytes);
  if (find_placement(rc.model.placement).name() == "admin")  // Admin's profiling runs one forward pass on x_0
    need.add("forward trace", trace_doubles(rc.model, rc.analysis.seq_len) * sizeof(double));
  require_memory(need, rc.analysis.max_memory_bytes, "export", "lower --layers or --d-model, or raise --max-memory");
  const std::vector<NamedPath> inputs = run_input_paths(rc);
  bool created_dir = false;  // a folder this export made: removed again when the export is refused (if still empty)
  if (format == "torch-encoder") {
    check_outputs({{"--out", out}}, inputs);
  } else {  // a folder: the two files it will hold must not be the inputs (e.g. the checkpoint just read)
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::exists(out, ec) && !fs::is_directory(out, ec))
      throw Error("--out '" + out + "' is not a folder; fix: name a folder (created when missing) for --format " + format);
    created_dir = !fs::exists(out, ec);
    fs::create_directories(out, ec);
    if (ec) throw Error("cannot create the folder '" + out + "': " + ec.message() + "; fix: choose a writable path");
    std::vector<NamedPath> read = inputs;  // a --weights folder: the files in it are inputs too
    if (!rc.weights.empty() && fs::is_directory(rc.weights, ec))
      for (const char* f : {"model.safetensors", "config.json", "model.safetensors.index.json"})
        read.push_back({"--weights", (fs::path(rc.weights) / f).string()});
    check_outputs({{"--out", (fs::path(out) / "model.safetensors").string()},
                   {"--out", (fs::path(out) / "config.json").string()}}, read);
  }
  try {
    Model model(rc.model);
    prepare_run(rc, model);  // --init (and Admin's profiling on the input), or --weights
    if (format == "torch-encoder") write_safetensors(out, to_tensors(model.params()));
    else write_hf_checkpoint(out, format, to_tensors(model.params()), model.config());
  } catch (...) {
    std::error_code ec;
    if (created_dir) std::filesystem::remove(out, ec);  // removes an empty folder only; never what it holds
    throw;
  }
}

}  // namespace gradflow
