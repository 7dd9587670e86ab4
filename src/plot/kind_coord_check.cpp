// kind_coord_check.cpp — `--kind coord-check`: microsoft/mup's coordinate-check figure from a `gradflow coord-check`
// report: one panel per quantity (stream, attention and feed-forward branch contributions, attention logits,
// output logits) and checked axis, x = log2 of the width or depth, y = mean |entry| (the mean over seeds) on a
// log scale, one line per step t (t = 1: at initialization); each panel's title carries the growth exponent b at the
// last step (train/coord_check.hpp). Flat lines: the sizes agree; rising ones: a blow-up.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "gradflow/core/error.hpp"
#include "gradflow/plot/kinds.hpp"
#include "gradflow/plot/series.hpp"
#include "gradflow/plot/style.hpp"

namespace gradflow {

Figure plot_coord_check(const std::vector<PlotInput>& in, const PlotOptions& o) {
  require(in.size() == 1 && in[0].kind == InputKind::CoordCheck,
          "coord-check draws one gradflow coord-check report; fix: pass the --json of one gradflow coord-check run");
  const PlotJson& r = in[0].json;
  std::vector<LineFigure> panels;
  long steps = 0;
  for (const auto& axis : r["axes"]) {
    const std::string name = axis["axis"].get<std::string>();
    for (const char* q : {"stream", "attn_branch", "ffn_branch", "attn_logits", "output_logits"}) {
      // (size, t) -> values over seeds
      std::map<std::pair<long long, long>, std::vector<double>> v;
      for (const auto& rec : axis["records"])
        for (const auto& st : rec["steps"])
          if (st.contains(q) && st[q].is_number())
            v[{rec["size"].get<long long>(), st["t"].get<long>()}].push_back(st[q].get<double>());
      std::map<long, Series> lines;
      for (const auto& [key, vals] : v) {
        double m = 0;
        for (double x : vals) m += x;
        Series& s = lines[key.second];
        s.x.push_back(std::log2(static_cast<double>(key.first)));
        s.y.push_back(m / static_cast<double>(vals.size()));
      }
      if (lines.empty()) continue;
      LineFigure f;
      f.logy = o.logy;  // auto: log when the sizes' values span decades
      f.integer_x = true;
      f.xlabel = name == "width" ? "log_2 width" : "log_2 depth";
      f.ylabel = "mean |entry|";
      f.key = "none";
      std::string verdict;
      for (const auto& vd : axis["verdicts"])
        if (vd["quantity"] == q && vd["exponent"].is_number()) {
          char b[64];
          std::snprintf(b, sizeof b, ", b = %+.2f", vd["exponent"].get<double>());  // at the last step
          verdict = b;
        }
      std::string title = q;
      std::replace(title.begin(), title.end(), '_', ' ');
      f.title = title + (r["axes"].size() > 1 ? " (" + name + ")" : "") + verdict;
      for (auto& [t, s] : lines) {
        s.style_spec = series_style(static_cast<int>(t - 1));
        steps = std::max(steps, t);
        f.series.push_back(std::move(s));
      }
      panels.push_back(std::move(f));
    }
  }
  require(!panels.empty(), "the coord-check report holds no records; fix: rerun gradflow coord-check");
  std::vector<Series> legend;
  for (long t = 1; t <= steps; ++t) {
    Series k;
    k.key_only = true;
    k.title = "t = " + std::to_string(t) + (t == 1 ? " (init)" : "");
    k.style_spec = series_style(static_cast<int>(t - 1));
    legend.push_back(std::move(k));
  }
  const int cols = o.width >= 6 ? 3 : 1;
  return panel_figure(std::move(panels), legend, cols, o.width, cols == 1 ? 1.4 : 1.6, 0, o.title);
}

}  // namespace gradflow
