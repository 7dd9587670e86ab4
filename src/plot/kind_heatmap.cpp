// heatmap.cpp — `--kind heatmap`: |J_ij| of one Jacobian (.npy from `gradflow jacobian`, shape (n·d, n·d), row
// i·d + a = output token i feature a, column j·d + b = input token j feature b; types.hpp) on a log colour scale
// (viridis, six decades below the largest entry), output index down, input index across. With --tokens n the
// n × n token blocks of size d are marked: attention fills the off-diagonal blocks (tokens mix), LayerNorm and
// the feed-forward act within a token (block-diagonal). Larger than kMaxPixels on a side: max-|J| pooling.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gradflow/core/error.hpp"
#include "gradflow/io/npy.hpp"
#include "gradflow/plot/kinds.hpp"
#include "gradflow/plot/style.hpp"

namespace gradflow {
namespace {

constexpr int64_t kMaxPixels = 320;     // data cells per side written to the data file
constexpr double kDecades = 6;          // colour range: [max·10^-6, max]

const char* kViridis =
    "set palette defined (0 '#440154', 1 '#482878', 2 '#3E4A89', 3 '#31688E', 4 '#26828E', 5 '#1F9E89', "
    "6 '#35B779', 7 '#6DCD59', 8 '#B4DE2C', 9 '#FDE725')\n";

}  // namespace

Figure plot_heatmap(const std::vector<PlotInput>& in, const PlotOptions& o) {
  require(in.size() == 1 && in[0].kind == InputKind::Npy,
          "heatmap reads one Jacobian .npy; fix: write one with `gradflow jacobian ... --out J.npy`");
  const NpyArray a = read_npy(in[0].path);
  require(a.shape.size() == 2, "'" + a.path + "' is not a matrix; fix: pass a Jacobian written by gradflow jacobian");
  const int64_t rows = a.shape[0], cols = a.shape[1];
  require(rows > 0 && cols > 0, "'" + a.path + "' is empty; fix: pass a Jacobian written by gradflow jacobian");
  if (o.tokens > 0)
    require(rows % o.tokens == 0 && cols % o.tokens == 0,
            "--tokens " + std::to_string(o.tokens) + " does not divide the Jacobian's shape (" + std::to_string(rows) + ", " +
                std::to_string(cols) + "); fix: pass the --seq-len used by gradflow jacobian");
  const int64_t f = std::max<int64_t>(1, (std::max(rows, cols) + kMaxPixels - 1) / kMaxPixels);  // pooling factor
  const int64_t pr = (rows + f - 1) / f, pc = (cols + f - 1) / f;
  std::vector<double> cell(static_cast<size_t>(pr * pc), 0.0);  // (pr, pc): max |J| over each f × f cell
  double top = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const double v = std::abs(a.data[static_cast<size_t>(i * cols + j)]);
      double& c = cell[static_cast<size_t>((i / f) * pc + j / f)];
      c = std::max(c, v);
      top = std::max(top, v);
    }
  require(top > 0, "'" + a.path + "' is all zeros: nothing to show on a log scale; fix: check the Jacobian");
  const double floor = top * std::pow(10.0, -kDecades);

  Figure fig;
  fig.aspect = 0.8;
  fig.data = "# |J| of " + a.path + ", " + std::to_string(pr) + " x " + std::to_string(pc) + " cells" +
             (f > 1 ? " (max over " + std::to_string(f) + " x " + std::to_string(f) + " entries)" : "") +
             ", floored at " + gp_num(floor) + "; row = output index, column = input index\n";
  char buf[32];
  for (int64_t i = 0; i < pr; ++i) {
    for (int64_t j = 0; j < pc; ++j) {
      std::snprintf(buf, sizeof buf, j ? " %.4g" : "%.4g", std::max(cell[static_cast<size_t>(i * pc + j)], floor));
      fig.data += buf;
    }
    fig.data += "\n";
  }
  std::string& b = fig.body;
  b += kViridis;
  b += "set logscale cb\nset cbrange [" + gp_num(floor) + ":" + gp_num(top) + "]\nset format cb '10^{%L}'\n";
  b += "set cblabel '|{/:Italic J_{ij}}|'\nset rmargin 7.5\nset lmargin 6.5\nset colorbox\n";
  b += "set size ratio " + gp_num(static_cast<double>(rows) / static_cast<double>(cols)) + "\n";
  b += "set xrange [-0.5:" + gp_num(cols - 0.5) + "]\nset yrange [" + gp_num(rows - 0.5) + ":-0.5]\n";
  b += "set border 15 lw 0.8\nset tics out scale 0.5 nomirror\nunset key\n";
  const std::string scale = "($1*" + std::to_string(f) + "+" + gp_num((f - 1) / 2.0) + "):($2*" + std::to_string(f) +
                            "+" + gp_num((f - 1) / 2.0) + "):3";
  if (o.tokens > 0) {
    const int64_t n = o.tokens, dr = rows / n, dc = cols / n;
    b += "set xlabel 'input token {/:Italic j}  (d = " + std::to_string(dc) + " each)'\n";
    b += "set ylabel 'output token {/:Italic i}'\n";
    const int64_t every = n <= 12 ? 1 : (n + 7) / 8;
    std::string xt, yt;
    for (int64_t t = 0; t < n; t += every) {
      xt += (xt.empty() ? "" : ", ") + gp_quote(std::to_string(t)) + " " + gp_num(t * dc + (dc - 1) / 2.0);
      yt += (yt.empty() ? "" : ", ") + gp_quote(std::to_string(t)) + " " + gp_num(t * dr + (dr - 1) / 2.0);
    }
    b += "set xtics (" + xt + ") scale 0\nset ytics (" + yt + ") scale 0\n";
    b += "set for [k=1:" + std::to_string(n - 1) + "] arrow from first k*" + std::to_string(dc) +
         "-0.5, graph 0 to first k*" + std::to_string(dc) + "-0.5, graph 1 nohead front lc rgb '#ffffff' lw 0.7\n";
    b += "set for [k=1:" + std::to_string(n - 1) + "] arrow from graph 0, first k*" + std::to_string(dr) +
         "-0.5 to graph 1, first k*" + std::to_string(dr) + "-0.5 nohead front lc rgb '#ffffff' lw 0.7\n";
  } else {
    b += "set xlabel 'input index {/:Italic j}  (token · d + feature; --tokens n marks the token blocks)'\n";
    b += "set ylabel 'output index {/:Italic i}'\n";
  }
  b += "plot data matrix using " + scale + " with image notitle\n";
  return fig;
}

}  // namespace gradflow
