// spectrum.cpp — `--kind spectrum`: the singular values σ_1 ≥ σ_2 ≥ ... of P_l = ∂y/∂x_l (--matrix P) or of
// B_l = ∂x_{l+1}/∂x_l (--matrix B) for the layers --at (default: bottom and top), from analyze reports made with
// --spectrum (layers[l].{product,block}_jacobian.spectrum.singular_values), or of a Jacobian .npy (SVD here).
// Log y; values at or below kRankRtol·σ_1 (numerically zero, svd.hpp) are left out and the axis label says so.
#include <cmath>

#include "gradflow/core/error.hpp"
#include "gradflow/io/npy.hpp"
#include "gradflow/linalg/svd.hpp"
#include "gradflow/plot/kinds.hpp"
#include "gradflow/plot/series.hpp"
#include "gradflow/plot/style.hpp"
#include "gradflow/report/fields.hpp"

namespace gradflow {
using namespace fields;
namespace {

constexpr Index kMaxSvdSize = 4096;  // an SVD of a larger .npy takes minutes: refuse it

// Appends σ (descending) as a series; returns whether values were left out as numerically zero.
bool add_spectrum(LineFigure& f, const std::string& title, const std::vector<double>& sigma) {
  Series s;
  s.title = title;
  bool omitted = false;
  const double top = sigma.empty() ? 0 : sigma.front();
  for (size_t i = 0; i < sigma.size(); ++i) {
    if (!(sigma[i] > kRankRtol * top)) { omitted = true; continue; }
    s.x.push_back(static_cast<double>(i + 1));
    s.y.push_back(sigma[i]);
  }
  f.series.push_back(std::move(s));
  return omitted;
}

}  // namespace

Figure plot_spectrum(const std::vector<PlotInput>& in, const PlotOptions& o) {
  require(o.matrix == "P" || o.matrix == "B", "--matrix '" + o.matrix + "' is unknown; fix: use --matrix P (product) or B (block)");
  const std::string group = o.matrix == "P" ? kProductJacobian : kBlockJacobian;
  LineFigure f;
  f.width = o.width;
  f.logy = o.logy == "auto" ? "on" : o.logy;
  f.ylabel = "singular value σ_{/:Italic i}";
  for (const auto& i : in)
    require(i.kind != InputKind::Experiment, "spectrum reads analyze reports or a Jacobian .npy, not the compare/sweep report '" + i.path + "'; fix: pass gradflow analyze --spectrum --json files");
  const std::vector<std::string> labels = analyze_report_labels(in);
  size_t next_label = 0;
  bool omitted = false;
  size_t longest = 0;
  for (const auto& i : in) {
    if (i.kind == InputKind::Npy) {
      const NpyArray a = read_npy(i.path);
      require(a.shape.size() == 2, "'" + i.path + "' is not a matrix; fix: pass a Jacobian written by gradflow jacobian");
      require(std::max(a.shape[0], a.shape[1]) <= kMaxSvdSize, "'" + i.path + "' is too large for an SVD here (" + std::to_string(a.shape[0]) + " x " + std::to_string(a.shape[1]) + "); fix: use gradflow analyze --spectrum on a smaller model");
      const Mat J = ConstMatMap(a.data.data(), a.shape[0], a.shape[1]);
      const Vec sv = singular_values(J);
      omitted |= add_spectrum(f, i.stem, std::vector<double>(sv.data(), sv.data() + sv.size()));
      longest = std::max(longest, static_cast<size_t>(sv.size()));
      continue;
    }
    const std::string label = labels[next_label++];
    const auto& layers = i.json[kLayers];
    const int L = static_cast<int>(layers.size());
    std::vector<int> at = o.at;
    if (at.empty()) at = L > 1 ? std::vector<int>{0, L - 1} : std::vector<int>{0};
    for (int l : at) {
      require(l >= 0 && l < L, "--at " + std::to_string(l) + " is not a layer of " + i.path + " (0.." + std::to_string(L - 1) + "); fix: pick layers in range");
      const auto& layer = layers[static_cast<size_t>(l)];
      const bool has = layer.contains(group) && layer[group].contains(kSpectrum) &&
                       layer[group][kSpectrum].contains(kSingularValues) && layer[group][kSpectrum][kSingularValues].is_array();
      require(has, i.path + " holds no singular values of " + o.matrix + "_" + std::to_string(l) +
                       "; fix: rerun gradflow analyze with --spectrum (explicit mode), or pass a Jacobian .npy from gradflow jacobian");
      std::vector<double> sigma;
      for (const auto& v : layer[group][kSpectrum][kSingularValues]) sigma.push_back(v.is_number() ? v.get<double>() : NAN);
      longest = std::max(longest, sigma.size());
      const std::string title = (in.size() > 1 || labels.size() > 1 ? gp_enhanced_literal(label) + ": " : "") +
                                "{/:Italic " + o.matrix + "}_{" + std::to_string(l) + "}";
      omitted |= add_spectrum(f, title, sigma);
      f.series.back().enhanced = true;
    }
  }
  f.xlabel = omitted ? "index {/:Italic i}   (σ_{/:Italic i} ≤ 10^{-10} σ_1 not shown)" : "index {/:Italic i}";
  f.point_interval = longest > 40 ? static_cast<int>(longest / 12) : 1;
  return line_figure(f);
}

}  // namespace gradflow
