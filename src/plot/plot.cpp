// plot.cpp — `gradflow plot`'s library entry: the registry of figure kinds (name -> builder) and make_plot.
#include <functional>
#include <map>

#include "gradflow/core/error.hpp"
#include "gradflow/plot/kinds.hpp"

namespace gradflow {
namespace {

constexpr size_t kMaxLinesOf2dSweep = 16;  // the lines a figure of a 2-D sweep's groups draws, at most

using Builder = std::function<Figure(const std::vector<PlotInput>&, const PlotOptions&)>;

const std::vector<std::pair<std::string, Builder>>& registry() {
  static const std::vector<std::pair<std::string, Builder>> r = {
      {"grad-by-depth", plot_grad_by_depth}, {"jacobian-norms", plot_jacobian_norms},
      {"spectrum", plot_spectrum},           {"sensitivity", plot_sensitivity},
      {"heatmap", plot_heatmap},             {"claims", plot_claims},
      {"loss-curves", plot_loss_curves},     {"grad-over-training", plot_grad_over_training},
      {"phase-diagram", plot_phase_diagram},   {"token-geometry", plot_token_geometry},
      {"attention-entropy", plot_attention_entropy}, {"coord-check", plot_coord_check},
      {"lr-transfer", plot_lr_transfer},     {"precision-error", plot_precision_error},
  };
  return r;
}

}  // namespace

const std::vector<std::string>& plot_kinds() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& [name, b] : registry()) v.push_back(name);
    return v;
  }();
  return names;
}

RenderedFiles make_plot(const PlotOptions& o, const std::string& command_line) {
  const Builder* build = nullptr;
  std::string known;
  for (const auto& [name, b] : registry()) {
    if (name == o.kind) build = &b;
    known += (known.empty() ? "" : ", ") + name;
  }
  require(build != nullptr, "--kind '" + o.kind + "' is unknown; fix: use one of " + known);
  require(o.logy == "auto" || o.logy == "on" || o.logy == "off", "--logy '" + o.logy + "' is unknown; fix: use auto, on or off");
  require(!o.inputs.empty(), "no input files; fix: pass report .json files (or a Jacobian .npy for heatmap/spectrum)");
  PlotOptions opts = o;
  if (!(opts.width > 0)) opts.width = o.kind == "claims" ? 7.0 : 3.5;
  std::vector<PlotInput> inputs = load_inputs(opts.inputs);
  std::vector<std::string> skipped;
  if (o.kind == "claims") {  // `plot results/*.json --kind claims`: the train-sweep claims have figures of their own
    std::vector<PlotInput> kept;
    for (auto& in : inputs) {
      if (in.kind == InputKind::Train) skipped.push_back(in.path + " (a train report: draw it with --kind loss-curves or grad-over-training)");
      else kept.push_back(std::move(in));
    }
    require(!kept.empty(), "claims found only train reports; fix: pass the compare/sweep reports of `gradflow run "
                           "examples/claims/...`, and draw train reports with --kind loss-curves");
    inputs = std::move(kept);
  }
  const bool train_kind = o.kind == "loss-curves" || o.kind == "grad-over-training" || o.kind == "lr-transfer";
  const bool either_kind = o.kind == "phase-diagram";  // a 2-D sweep or a train-sweep (the kind checks which)
  for (const auto& in : inputs) {
    if (in.kind == InputKind::OverTraining) {  // a run's checkpoints analyzed: drawn against the step
      require(o.kind == "grad-over-training", "'" + in.path + "' is a report over a run's checkpoints (analyze "
                                              "--weights A B ...); fix: plot it with --kind grad-over-training");
      continue;
    }
    require(either_kind || (in.kind == InputKind::Train) == train_kind,
            train_kind ? "--kind " + o.kind + " reads train/train-sweep reports" +
                             (o.kind == "grad-over-training" ? std::string(" or the report of analyze --weights A B ...")
                                                             : std::string()) +
                             ", not '" + in.path + "'; fix: pass the --json of gradflow train or train-sweep"
                       : "'" + in.path + "' is a train report; fix: plot it with --kind loss-curves or grad-over-training");
  }
  // a line per group of a 2-D sweep is a tangle beyond a few values: its grid is a heatmap
  const bool per_group_lines = o.kind == "grad-by-depth" || o.kind == "jacobian-norms" || o.kind == "token-geometry" ||
                               o.kind == "sensitivity";
  for (const auto& in : inputs)
    if (per_group_lines && in.kind == InputKind::Experiment && in.json.contains("param2") &&
        in.json.contains("groups") && in.json["groups"].size() > kMaxLinesOf2dSweep)
      throw Error("'" + in.path + "' is a 2-D sweep of " + std::to_string(in.json["groups"].size()) + " groups: --kind " +
                  o.kind + " would draw a line for each, more than the " + std::to_string(kMaxLinesOf2dSweep) +
                  " a reader can follow; fix: --kind phase-diagram (the grid as a heatmap, a panel per placement)");
  const Figure fig = (*build)(inputs, opts);
  RenderedFiles files = render_figure(fig, opts, command_line);
  files.skipped = std::move(skipped);
  return files;
}

}  // namespace gradflow
