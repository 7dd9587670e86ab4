// cmd_compare.cpp — `gradflow compare --placements post,pre --layers 6,12,24 --seeds 5 [model options]`:
// mean ± std over seeds of every per-layer and summary metric for each (placement, depth), ratios between
// placements at equal depth, power-law fits against depth; a table on stdout, --json and --csv (long format).
#include "cli/commands.hpp"
#include "cli/experiment_options.hpp"
#include "gradflow/core/error.hpp"

namespace gradflow::cli {
namespace {

struct CompareOptions {
  ExperimentOptions exp;
  std::string placements = "post,pre";
  std::string layers = "6,12,24";
};

Index parse_depth(const std::string& s) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  require(used == s.size() && v >= 1, "--layers item '" + s + "' is not a positive integer; fix: e.g. --layers 6,12,24");
  return static_cast<Index>(v);
}

void run_compare(const CLI::App& sub, const CompareOptions& o) {
  PlanAxes axes;
  axes.placements = split_list(o.placements, "--placements");
  for (const auto& s : split_list(o.layers, "--layers")) axes.depths.push_back(parse_depth(s));
  ExperimentOptions exp = o.exp;  // --weights: the checkpoint's depth and block unless --layers/--placements say
  axes_from_checkpoint(exp, axes, "--placements", sub.get_option("--placements")->count() > 0,
                       sub.get_option("--layers")->count() > 0);
  run_experiment_command(sub, "compare", axes, exp);
}

}  // namespace

void setup_compare(CLI::App& app) {
  auto opts = std::make_shared<CompareOptions>();
  auto* sub = app.add_subcommand("compare", "placements side by side: mean and std over seeds, ratios, CSV");
  add_experiment_options(*sub, opts->exp);
  // compare takes lists where analyze takes one placement and one depth
  sub->remove_option(sub->get_option("--placement"));
  sub->remove_option(sub->get_option("--layers"));
  sub->add_option("--placements", opts->placements, "comma-separated placements (see `gradflow placements`)")
      ->capture_default_str();
  sub->add_option("--layers", opts->layers, "comma-separated depths L")->capture_default_str();
  sub->callback([sub, opts] { run_compare(*sub, *opts); });
}

}  // namespace gradflow::cli
