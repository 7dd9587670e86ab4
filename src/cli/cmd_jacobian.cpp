// cmd_jacobian.cpp — `gradflow jacobian [model options] --from l --to m --out J.npy`: the explicit Jacobian
// dx_m/dx_l at the network's own forward pass (m = L: the output y), shape (n*d, n*d), row-major flattening (resi-dual:
// the state is the pair [x_a | x_d], so (n*2d, n*2d) between blocks and (n*d, n*2d) to the output; docs/math.md §12).
// The work is the library's (run/model_files.hpp).
#include "cli/commands.hpp"
#include "gradflow/run/model_options.hpp"
#include "gradflow/run/model_files.hpp"

namespace gradflow::cli {
namespace {
struct JacobianOptions {
  ModelSettings model;
  Index from = 0;
  std::optional<Index> to;
  std::string out, format;
};
}  // namespace

void setup_jacobian(CLI::App& app) {
  auto opts = std::make_shared<JacobianOptions>();
  auto* sub = app.add_subcommand("jacobian", "write the explicit Jacobian dx_to/dx_from as .npy (or .csv)");
  add_model_options(*sub, opts->model);
  sub->add_option("--from", opts->from, "input layer l (x_l, 0 = the network input)")->capture_default_str();
  sub->add_option("--to", opts->to, "output layer m >= l (default L: the network output y)");
  sub->add_option("--out", opts->out, "output file (.npy float64, or .csv)")->check(non_empty_path())->required();
  sub->add_option("--format", opts->format, "npy | csv (default: from the file name)");
  sub->callback([opts] { write_model_jacobian(resolve(opts->model), opts->from, opts->to, opts->out, opts->format); });
}

}  // namespace gradflow::cli
