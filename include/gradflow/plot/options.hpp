// options.hpp — what `gradflow plot` was asked for: the inputs, the figure kind, the output and its size.
// Paper-ready defaults: 3.5 in wide (one column), height from the kind's aspect ratio, PNG at 300 dpi.
#pragma once
#include <string>
#include <vector>

namespace gradflow {

struct PlotOptions {
  std::vector<std::string> inputs;  // analyze / compare / sweep reports (.json) or a Jacobian (.npy)
  std::string kind;                 // grad-by-depth | jacobian-norms | spectrum | sensitivity | heatmap | claims |
                                    // phase-diagram | ... (plot_kinds())
  std::string output;               // FIGURE.pdf | .svg | .png: the extension picks the cairo terminal
  double width = 0;                 // inches (3.5: single column, 7: two columns); 0: 3.5, claims 7
  double height = 0;                // inches; 0: width times the kind's aspect ratio
  int dpi = 300;                    // PNG only: pixels = inches * dpi
  std::string param;                // grad-by-depth: plot ||dL/dW|| of this parameter instead of ||dL/dx_l||
  std::string metric;               // sensitivity, claims, phase-diagram: the scalar metric (default
                                    // summary.bottom_to_top_grad_ratio; phase-diagram of a train-sweep: converged_fraction)
  std::vector<double> levels;       // phase-diagram: the contour levels (default: round values across the range)
  std::string matrix = "P";         // spectrum: P (product P_l = dy/dx_l) or B (block B_l = dx_{l+1}/dx_l)
  std::vector<int> at;              // spectrum: the layers l whose spectrum is drawn (default: bottom and top)
  int tokens = 0;                   // heatmap: tokens n of the Jacobian (marks the n x n blocks of size d)
  std::string title;                // optional title above the plot
  std::string logy = "auto";        // auto (log when values span more than a decade) | on | off; phase-diagram:
                                    // the colour scale
  std::string logx = "off";         // loss-curves, grad-over-training: log step axis (on | off | auto)
  bool render = true;               // false: write the script and data only (--no-render)
};

}  // namespace gradflow
