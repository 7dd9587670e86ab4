// cmd_jacobian.cpp — `gradflow jacobian [model options] --from l --to m --out J.npy`: the explicit Jacobian
// dx_m/dx_l at the network's own forward pass (m = L: the output y), shape (n*d, n*d), row-major flattening (resi-dual:
// the state is the pair [x_a | x_d], so (n*2d, n*2d) between blocks and (n*d, n*2d) to the output; docs/math.md §12).
#include "cli/commands.hpp"
#include "cli/model_options.hpp"
#include "gradflow/core/finite.hpp"
#include "gradflow/run/engine.hpp"
#include "gradflow/run/context.hpp"
#include "gradflow/run/numeric_fix.hpp"
#include "gradflow/run/run_inputs.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/io/csv.hpp"
#include "gradflow/io/npy.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/report/atomic_file.hpp"

namespace gradflow::cli {
namespace {
struct JacobianOptions {
  ModelSettings model;
  Index from = 0;
  std::optional<Index> to;
  std::string out, format;
};

void run_jacobian(const JacobianOptions& o) {
  RunConfig rc = resolve(o.model);
  rc.analysis.engine_request = EngineRequest::Explicit;  // dense Jacobians: refused up front when they do not fit
  const RunBackend backend(rc.analysis.backend);
  choose_engine(rc.model, rc.analysis, backend);
  std::string format = o.format;
  if (format.empty()) format = o.out.size() >= 4 && o.out.substr(o.out.size() - 4) == ".csv" ? "csv" : "npy";
  require(format == "npy" || format == "csv", "--format '" + format + "' is unknown; fix: use --format npy or csv");
  check_outputs({{"--out", o.out}}, run_input_paths(rc));
  Model model(rc.model);
  const RunInputs in = prepare_run(rc, model);  // --weights/--input/--cotangent, or --init and seeded draws
  const Mat J = with_nonfinite_fix(rc, in.x0, [&] {
    const AnalysisContext ctx(model, in.x0, rc.analysis, backend.get(), in.cotangent_or_null(), rc.init.seed,
                                in.lm_loss_or_null());
    Mat j = ctx.jacobian_between(o.from, o.to.value_or(model.layers()));
    if (!all_finite(j))
      throw Error("NaN/Inf in the Jacobian dx_" + std::to_string(o.to.value_or(model.layers())) + "/dx_" +
                      std::to_string(o.from) + "; fix: " + std::string(kNonFiniteFix), ErrorKind::Numeric);
    return j;
  });
  if (format == "npy") write_npy(o.out, J);
  else write_csv(o.out, J);
}
}  // namespace

void setup_jacobian(CLI::App& app) {
  auto opts = std::make_shared<JacobianOptions>();
  auto* sub = app.add_subcommand("jacobian", "write the explicit Jacobian dx_to/dx_from as .npy (or .csv)");
  add_model_options(*sub, opts->model);
  sub->add_option("--from", opts->from, "input layer l (x_l, 0 = the network input)")->capture_default_str();
  sub->add_option("--to", opts->to, "output layer m >= l (default L: the network output y)");
  sub->add_option("--out", opts->out, "output file (.npy float64, or .csv)")->check(non_empty_path())->required();
  sub->add_option("--format", opts->format, "npy | csv (default: from the file name)");
  sub->callback([opts] { run_jacobian(*opts); });
}

}  // namespace gradflow::cli
