// attention_entropy.cpp — `--kind attention-entropy`: each attention head's entropy relative to its maximum,
// H/H_max (the mean over queries of −Σ_j A_ij ln A_ij over the mean of ln(keys a query sees); 1 = uniform attention,
// 0 = each query attends to one key: entropy collapse, Zhai et al. 2023), as a heatmap of layer l (up) × head
// (across), one panel per analyze report (layers[l].attention.heads[h].entropy / layers[l].attention.max_entropy),
// colours over the values' span (rounded out to 0.05, within [0, 1]; grid_figure.hpp). A compare/sweep report keeps
// only the mean over heads: layer × placement, a panel per depth (or swept value), the mean over seeds of
// per_layer[l]["attention.entropy"] / ["attention.max_entropy"].
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "gradflow/core/error.hpp"
#include "gradflow/plot/kinds.hpp"
#include "gradflow/report/fields.hpp"
#include "grid_figure.hpp"

namespace gradflow {
using namespace fields;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// 0 .. n-1 as an axis of equal cells.
GridAxis index_axis(const std::string& name, const std::string& label, size_t n) {
  std::vector<std::string> order;
  std::map<std::string, double> num;
  for (size_t k = 0; k < n; ++k) order.push_back(std::to_string(k)), num[order.back()] = static_cast<double>(k);
  return grid_axis(name, label, order, num, false);  // tics as many as fit, at round indices
}

}  // namespace

Figure plot_attention_entropy(const std::vector<PlotInput>& in, const PlotOptions& o) {
  const std::string layer_label = "layer {/:Italic l}";
  GridStyle st;
  st.cblabel = "attention entropy / its maximum";
  st.contours = false;
  // the colours span the values (rounded out to 0.05; at most [0, 1]), so 0.85 and 1 are told apart
  const auto span = [&st](const std::vector<GridPanel>& panels) {
    double lo = 1, hi = 0;
    for (const auto& p : panels)
      for (double v : p.v)
        if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    if (!(hi >= lo)) return;
    st.lo = std::max(0.0, std::floor(lo * 20 + 1e-9) / 20), st.hi = std::min(1.0, std::ceil(hi * 20 - 1e-9) / 20);
    if (!(st.hi > st.lo)) st.lo = std::max(0.0, st.hi - 0.05);
  };
  PlotOptions po = o;
  po.logy = "off";  // a ratio in [0, 1]
  if (in.size() == 1 && in[0].kind == InputKind::Experiment) {
    // a column per placement, a panel per value of what else varies (depth, swept value): every column named
    const PlotJson& groups = in[0].json[kGroups];
    const std::vector<std::vector<std::string>> factors = group_factors(in[0].json);
    std::vector<std::string> columns, panel_names;
    std::vector<std::pair<size_t, size_t>> at;  // per group: (panel, column)
    for (const auto& f : factors) {
      std::string rest;
      for (size_t k = 1; k < f.size(); ++k) rest += (rest.empty() ? "" : ", ") + f[k];
      const auto index = [](std::vector<std::string>& names, const std::string& n) {
        auto it = std::find(names.begin(), names.end(), n);
        if (it == names.end()) it = names.insert(names.end(), n);
        return static_cast<size_t>(it - names.begin());
      };
      at.emplace_back(index(panel_names, rest), index(columns, f.empty() ? "?" : f[0]));
    }
    size_t depth = 0;
    for (const auto& g : groups) depth = std::max(depth, g[kPerLayer].size());
    std::map<std::string, double> num;
    for (const auto& c : columns) num[c] = kNaN;
    GridAxis ax = grid_axis("placement", "", columns, num, false);
    ax.upright = true;  // every placement named: thinned out, most columns would be anonymous
    const GridAxis ay = index_axis("layer", layer_label, depth);
    std::vector<GridPanel> panels;
    for (const auto& name : panel_names)
      panels.push_back({name.empty() ? "mean over heads and seeds" : name + " (mean over heads and seeds)",
                        std::vector<double>(columns.size() * depth, kNaN)});
    bool any = false;
    for (size_t g = 0; g < groups.size(); ++g)
      for (size_t l = 0; l < groups[g][kPerLayer].size(); ++l) {
        const PlotJson& layer = groups[g][kPerLayer][l];
        const double h = json_stat(layer, std::string(kAttention) + "." + kEntropy).first;
        const double m = json_stat(layer, std::string(kAttention) + "." + kMaxEntropy).first;
        if (m > 0) panels[at[g].first].v[at[g].second * depth + l] = h / m, any = true;
      }
    require(any, "no attention entropy (per_layer[l].attention.entropy) in " + in[0].path + "; fix: rerun it with a "
                 "gradflow that reports it (docs/report-schema.md)");
    st.what = "attention.entropy / attention.max_entropy, means over seeds, of " + in[0].path;
    span(panels);
    return grid_figure(ax, ay, panels, st, po, "attention entropy");
  }
  for (const auto& i : in)
    require(i.kind == InputKind::Analyze, "attention-entropy reads analyze reports (or one compare/sweep report), not '" +
                                              i.path + "'; fix: pass the --json of gradflow analyze");
  std::vector<const PlotInput*> reports;
  for (const auto& i : in) reports.push_back(&i);
  const std::vector<std::string> titles = report_labels(reports);
  size_t heads = 0, depth = 0;
  for (const auto& i : in) {
    depth = std::max(depth, i.json[kLayers].size());
    for (const auto& layer : i.json[kLayers])
      if (layer.contains(kAttention) && layer[kAttention].contains(kHeads))
        heads = std::max(heads, layer[kAttention][kHeads].size());
  }
  require(heads > 0, "no attention heads (layers[l].attention.heads) in the inputs; fix: rerun them with a gradflow "
                     "that reports them (docs/report-schema.md)");
  const GridAxis ax = index_axis("head", "head", heads), ay = index_axis("layer", layer_label, depth);
  std::vector<GridPanel> panels;
  for (size_t r = 0; r < in.size(); ++r) {
    GridPanel p{titles[r], std::vector<double>(heads * depth, kNaN)};
    const PlotJson& layers = in[r].json[kLayers];
    for (size_t l = 0; l < layers.size(); ++l) {
      if (!layers[l].contains(kAttention)) continue;
      const PlotJson& a = layers[l][kAttention];
      const double m = json_number(a, kMaxEntropy);
      if (!(m > 0) || !a.contains(kHeads)) continue;
      for (size_t h = 0; h < a[kHeads].size(); ++h) p.v[h * depth + l] = json_number(a[kHeads][h], kEntropy) / m;
    }
    panels.push_back(std::move(p));
  }
  st.what = "layers[l].attention.heads[h].entropy / layers[l].attention.max_entropy";
  span(panels);
  return grid_figure(ax, ay, panels, st, po, "attention entropy");
}

}  // namespace gradflow
