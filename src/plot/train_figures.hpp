// train_figures.hpp — what loss-curves and grad-over-training share: the step axis (a log step axis still shows
// step 0, drawn a quarter of the first logged step to its left with the tic "0") and the small multiples of a
// train-sweep report (one panel per placement and depth, one style per (lr, warmup) cell, one legend below).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "gradflow/plot/inputs.hpp"
#include "gradflow/plot/series.hpp"

namespace gradflow {

struct StepAxis {
  bool log = false;
  double zero_at = 0;  // where step 0 is drawn on a log axis
  double first = 0, last = 0;  // the first positive and the last step
  double at(double step) const { return log && !(step > 0) ? zero_at : step; }
};

// The step axis of --logx (on | off | auto: log when the positive steps span more than a decade) for the steps
// of `in` (train reports' log[].step, train-sweep runs' curve[].step, over-training reports' checkpoints[].step).
StepAxis step_axis(const std::vector<PlotInput>& in, const std::string& logx);
// Sets f's x axis: label, log or linear; on a log axis the tic "0" at zero_at and 1-2-5 tics from the first logged
// step on (none between step 0 and it, where no step was logged); round tics on a linear one.
void apply_step_axis(LineFigure& f, const StepAxis& a);

// One line of a train-sweep panel: the (lr, warmup) cell it belongs to and its points.
struct CellLine {
  double lr = 0;
  long long warmup = 0;
  Series series;
};
// Small multiples of train-sweep reports: `lines(group)` gives a group's lines (group = one (placement, depth) of
// report.groups, with its report); one panel per group titled "post, L=6" (the file's stem first when several),
// colour by lr and marker and dash by warmup when both vary (one style per cell otherwise), one legend below;
// `axes` gives the y axis, `step` the x axis.
Figure sweep_panels(const std::vector<PlotInput>& in, const PlotOptions& o, const LineFigure& axes,
                    const StepAxis& step, const std::function<std::vector<CellLine>(const PlotInput&, const PlotJson&)>& lines);

// grad-over-training of over-training reports (analyze --weights A B ...): one row of panels per quantity
// (‖dL/dx_l‖, ‖B_l − I‖_F/√N when present, the mean token cosine of x_l), one column per depth band
// (over_training_figure.cpp).
Figure over_training_panels(const std::vector<PlotInput>& in, const PlotOptions& o, const StepAxis& step);

}  // namespace gradflow
