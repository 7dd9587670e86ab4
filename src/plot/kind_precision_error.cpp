// kind_precision_error.cpp — `--kind precision-error`: the relative error ‖g_p − g‖/‖g‖ of dL/dx_l at an emulated
// precision against float64's, against layer l, from analyze reports made with --precision (layers[l].precision;
// run/precision_compare.hpp): one line per report (its placement or file, and the type), log y; the layers where
// entries underflowed to 0 (underflow_fraction > 0) ringed in black. An exact layer (error 0) has no point on the log
// axis.
#include <cmath>

#include "gradflow/core/error.hpp"
#include "gradflow/plot/kinds.hpp"
#include "gradflow/plot/series.hpp"
#include "gradflow/report/fields.hpp"
#include "gradflow/report/number_text.hpp"

namespace gradflow {
using namespace fields;

Figure plot_precision_error(const std::vector<PlotInput>& in, const PlotOptions& o) {
  for (const auto& i : in)
    require(i.kind == InputKind::Analyze && i.json.contains(kPrecision) && i.json[kPrecision].is_object(),
            "'" + i.path + "' holds no --precision comparison; fix: pass gradflow analyze --precision f32|bf16|f16 "
            "(or --autocast bf16|f16) --json reports");
  const std::vector<std::string> labels = analyze_report_labels(in);
  LineFigure f;
  f.width = o.width;
  f.logy = o.logy == "auto" ? "on" : o.logy;
  f.integer_x = true;
  f.xlabel = "layer {/:Italic l}";
  f.ylabel = "error of ∂{/:Italic L}/∂{/:Italic x_l} vs float64";
  Series under;
  under.title = "entries underflowed to 0";
  under.with = "points";
  under.style_spec = "lc rgb 'black' pt 6 ps 1.4";
  for (size_t k = 0; k < in.size(); ++k) {
    const PlotJson& r = in[k].json;
    Series s;
    const std::string type = r[kPrecision].value("type", "?");
    s.title = labels[k].find(type) == std::string::npos ? labels[k] + " " + type : labels[k];  // "f16 f16" once
    if (r[kPrecision].value("regime", "cast") == "autocast") s.title += " autocast";
    const double scale = r[kPrecision].value(kLossScale, 1.0);
    if (scale != 1.0) {  // a power of two (dynamic ones always are) as 2^k: short in the legend
      int e = 0;
      s.title += std::frexp(scale, &e) == 0.5 ? ", S = 2^" + std::to_string(e - 1) : ", S = " + number_text(scale);
    }
    for (const auto& layer : r[kLayers]) {
      const PlotJson& p = layer.at(kPrecision);
      const double l = json_number(layer, kIndex);
      const double e = p[kGradRelError].is_number() ? p[kGradRelError].get<double>() : NAN;
      s.x.push_back(l);
      s.y.push_back(e > 0 ? e : NAN);
      if (p.value(kUnderflowFraction, 0.0) > 0 && e > 0) {
        under.x.push_back(l);
        under.y.push_back(e);
      }
    }
    f.series.push_back(std::move(s));
  }
  if (!under.x.empty()) f.series.push_back(std::move(under));
  return line_figure(f);
}

}  // namespace gradflow
