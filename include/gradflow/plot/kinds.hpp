// kinds.hpp — the figure kinds of `gradflow plot --kind KIND`, one source file each in src/plot/, and the entry
// point that loads the inputs, builds the figure and renders it. docs/plotting.md lists what each kind reads.
#pragma once
#include <string>
#include <vector>

#include "gradflow/plot/gnuplot.hpp"
#include "gradflow/plot/inputs.hpp"
#include "gradflow/plot/options.hpp"

namespace gradflow {

// ||dL/dx_l|| (or ||dL/dW|| of --param) against layer l; one line per report or compare group, a band for the
// seed spread (mean ± std) of a compare report.
Figure plot_grad_by_depth(const std::vector<PlotInput>& in, const PlotOptions& o);
// ||B_l||_2, ||P_l||_2 and sigma_min(P_l) against layer l.
Figure plot_jacobian_norms(const std::vector<PlotInput>& in, const PlotOptions& o);
// The relative error of dL/dx_l at an emulated precision against float64's, per layer (analyze --precision);
// underflowed layers ringed.
Figure plot_precision_error(const std::vector<PlotInput>& in, const PlotOptions& o);
// Singular values of P_l or B_l (analyze --spectrum), or of a Jacobian .npy, sorted, log scale.
Figure plot_spectrum(const std::vector<PlotInput>& in, const PlotOptions& o);
// A sweep's scalar metric against the swept parameter, mean ± std over seeds as error bars.
Figure plot_sensitivity(const std::vector<PlotInput>& in, const PlotOptions& o);
// |J| of a Jacobian .npy on a log colour scale, token blocks marked.
Figure plot_heatmap(const std::vector<PlotInput>& in, const PlotOptions& o);
// A scalar metric over the grid of a 2-D sweep (or a train-sweep's lr x warmup) as a heatmap with contour lines,
// one panel per placement.
Figure plot_phase_diagram(const std::vector<PlotInput>& in, const PlotOptions& o);
// Token geometry of x_l against layer l (mean token cosine, distance to rank one, stable rank), a panel each, a line
// per analyze report or compare group.
Figure plot_token_geometry(const std::vector<PlotInput>& in, const PlotOptions& o);
// Each head's attention entropy over its maximum as a layer x head heatmap, a panel per analyze report (a compare
// report: layer x group of the mean over heads).
Figure plot_attention_entropy(const std::vector<PlotInput>& in, const PlotOptions& o);
// A compact multi-panel summary of claim experiments (one compare/sweep report per claim).
Figure plot_claims(const std::vector<PlotInput>& in, const PlotOptions& o);

// Train and eval loss against step: one pair of lines per train report, one mean eval curve per cell of a
// train-sweep report (--logx for a log step axis).
Figure plot_loss_curves(const std::vector<PlotInput>& in, const PlotOptions& o);
// ||dL/dx_l|| against step, one line per layer (at most 6 evenly spaced layers, bottom and top included) of each
// train report; train-sweep reports: bottom and top layer of each run.
Figure plot_grad_over_training(const std::vector<PlotInput>& in, const PlotOptions& o);

// A coord-check report (train/coord_check.hpp): mean |entry| against log2 width or depth, a panel per quantity and
// axis, a line per step.
Figure plot_coord_check(const std::vector<PlotInput>& in, const PlotOptions& o);

// Train-sweep reports (one per width, or one over depths): final eval loss against lr, a panel per placement, a line
// per size, each line's fitted optimum marked.
Figure plot_lr_transfer(const std::vector<PlotInput>& in, const PlotOptions& o);

// The kind names, in the order `--help` lists them.
const std::vector<std::string>& plot_kinds();

// Loads o.inputs, builds the figure of o.kind and renders it (see render_figure). `command_line` is recorded
// in the script's header.
RenderedFiles make_plot(const PlotOptions& o, const std::string& command_line);

}  // namespace gradflow
