// over_training_figure.cpp — grad-over-training for the reports of `gradflow analyze --weights A B C …` (a run's
// checkpoints; commands/analyze_over_training.hpp): small multiples, one row per quantity the reports hold
// (‖dL/dx_l‖; ‖B_l − I‖_F/√N where the explicit engine computed it; the mean token cosine of x_l) and one column
// per depth band (bottom, middle and top third of the blocks), each panel a line per layer of its band (up to three,
// evenly spaced, its ends included) against the checkpoint's step. One y range per row, so the bands compare.
#include <algorithm>
#include <cmath>

#include "gradflow/core/error.hpp"
#include "gradflow/plot/kinds.hpp"
#include "gradflow/plot/series.hpp"
#include "gradflow/plot/style.hpp"
#include "gradflow/report/fields.hpp"
#include "train_figures.hpp"

namespace gradflow {
using namespace fields;
namespace {

struct Quantity {
  const Metric* metric;
  const char* label;  // the y label: the metric's, shorter where a panel's width needs it
  bool (*present)(const PlotJson& layer);
  double (*value)(const PlotJson& layer);
};

double number_or_nan(const PlotJson& v) { return v.is_number() ? v.get<double>() : NAN; }

const Quantity kQuantities[] = {
    {&metrics::kLayerGradNorm, metrics::kLayerGradNorm.plot, [](const PlotJson& l) { return l.contains(kGradNorm); },
     [](const PlotJson& l) { return number_or_nan(l[kGradNorm]); }},
    {&metrics::kBlockMinusIdentity, metrics::kBlockMinusIdentity.plot,
     [](const PlotJson& l) { return l.contains(kBlockJacobian) && l[kBlockJacobian].contains(kMinusIdentityRelativeFrobenius); },
     [](const PlotJson& l) { return number_or_nan(l[kBlockJacobian][kMinusIdentityRelativeFrobenius]); }},
    {&metrics::kLayerTokenCosine, "token cosine of {/:Italic x_l}",
     [](const PlotJson& l) { return l.contains(kTokenGeometry) && l[kTokenGeometry].contains(kMeanCosine); },
     [](const PlotJson& l) { return number_or_nan(l[kTokenGeometry][kMeanCosine]); }},
};

// The layers drawn for band b of `bands` over L blocks: up to three, evenly spaced, the band's ends included.
std::vector<size_t> band_layers(size_t L, size_t b, size_t bands) {
  const size_t lo = b * L / bands, hi = (b + 1) * L / bands;  // [lo, hi)
  std::vector<size_t> out;
  if (hi <= lo) return out;
  const size_t count = std::min<size_t>(3, hi - lo);
  for (size_t k = 0; k < count; ++k) {
    const size_t l = count == 1 ? lo : lo + k * (hi - 1 - lo) / (count - 1);
    if (out.empty() || out.back() != l) out.push_back(l);
  }
  return out;
}

}  // namespace

Figure over_training_panels(const std::vector<PlotInput>& in, const PlotOptions& o, const StepAxis& step) {
  size_t L = 0;
  for (const PlotInput& i : in) {
    require(i.json[kCheckpoints].is_array() && !i.json[kCheckpoints].empty(),
            "input '" + i.path + "': \"checkpoints\" must be a non-empty list; fix: pass the report of gradflow analyze "
            "--weights A B ... --json, unedited");
    for (const PlotJson& c : i.json[kCheckpoints])
      require(c.is_object() && c.contains(kStep) && c[kStep].is_number() && c.contains(kReport) &&
                  c[kReport].contains(kLayers) && c[kReport][kLayers].is_array() && !c[kReport][kLayers].empty(),
              "input '" + i.path + "': every checkpoint needs a step and a report with layers; fix: pass the report "
              "of gradflow analyze --weights A B ... --json, unedited");
    const size_t Li = i.json[kCheckpoints][0][kReport][kLayers].size();
    require(L == 0 || Li == L, "input '" + i.path + "' has " + std::to_string(Li) + " layers, the first input " +
                                   std::to_string(L) + "; fix: plot runs of one depth together");
    L = Li;
  }
  std::vector<const Quantity*> rows;  // the quantities every first checkpoint's first layer holds
  for (const Quantity& q : kQuantities) {
    bool all = true;
    for (const PlotInput& i : in) all = all && q.present(i.json[kCheckpoints][0][kReport][kLayers][0]);
    if (all) rows.push_back(&q);
  }
  const size_t bands = std::min<size_t>(3, L);
  const char* const band_names[3] = {"bottom", "middle", "top"};
  std::vector<LineFigure> panels;
  for (const Quantity* q : rows) {
    const bool last_row = q == rows.back();
    std::vector<LineFigure> row;
    double lo = INFINITY, hi = -INFINITY, pos_lo = INFINITY;
    for (size_t b = 0; b < bands; ++b) {
      LineFigure f;
      f.ylabel = q->label;
      f.key = last_row ? "below" : "none";  // the layers of a column are the same in every row: named once, below
      f.width = o.width / static_cast<double>(bands);
      f.title = bands == 1 ? std::string("all layers") : bands == 2 ? (b == 0 ? "bottom" : "top") : band_names[b];
      f.logy = q->metric == &metrics::kLayerTokenCosine ? "off" : (o.logy == "auto" ? "auto" : o.logy);
      int style = 0;
      for (const PlotInput& i : in)
        for (size_t l : band_layers(L, b, bands)) {
          Series s;
          s.title = (in.size() > 1 ? i.stem + ": " : "") + "layer " + std::to_string(l);
          s.style_spec = series_style(style++);
          for (const PlotJson& c : i.json[kCheckpoints]) {
            const PlotJson& layers = c[kReport][kLayers];
            if (l >= layers.size()) continue;
            const double v = q->present(layers[l]) ? q->value(layers[l]) : NAN;
            s.x.push_back(step.at(c[kStep].get<double>()));
            s.y.push_back(v);
            if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v), pos_lo = v > 0 ? std::min(pos_lo, v) : pos_lo;
          }
          f.series.push_back(std::move(s));
        }
      apply_step_axis(f, step);
      row.push_back(std::move(f));
    }
    for (LineFigure& f : row) {  // one y range per row
      if (!std::isfinite(lo)) continue;
      if (f.logy == "auto") f.logy = hi > 0 && lo > 0 && spans_decades(pos_lo, hi) ? "on" : "off";
      f.y_lo = f.logy == "on" ? pos_lo : lo;
      f.y_hi = hi;
      if (f.logy != "on") {  // a linear axis: the row's range, 5 % margins (0 kept as the floor of a positive range)
        const double pad = hi > lo ? 0.05 * (hi - lo) : std::max(std::abs(hi), 1.0) * 0.05;
        const double bottom = lo >= 0 && lo < 0.2 * hi ? 0.0 : lo - pad;
        f.extra += "set yrange [" + gp_num(bottom) + ":" + gp_num(hi + pad) + "]\n";
      }
      panels.push_back(std::move(f));
    }
  }
  require(!panels.empty(), "no gradient record in the inputs; fix: pass the report of gradflow analyze --weights A B ... --json");
  return panel_figure(std::move(panels), {}, static_cast<int>(bands), o.width, o.width / static_cast<double>(bands) * 0.75, 0, o.title);
}

}  // namespace gradflow
