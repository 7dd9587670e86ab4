// grid_figure.hpp — the heatmap figure of values on a grid of two axes, shared by the phase-diagram kind (a metric
// over a 2-D sweep) and the attention-entropy kind (layer x head): one panel per report or placement, side by side
// in rows, one colour scale (viridis) and one colour box for all, optional contour lines (contour.hpp) labelled at
// the point of each line farthest inside, cells without a value left blank.
#pragma once
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "gradflow/plot/gnuplot.hpp"
#include "gradflow/plot/options.hpp"

namespace gradflow {

enum class GridScale { Log, Linear, Category };

struct GridAxis {
  std::string label;                // gnuplot enhanced text
  std::string name;                 // what the data file calls it ("init-scale", "head")
  GridScale scale = GridScale::Category;
  std::vector<std::string> values;  // in plot order, as the tics name them
  std::vector<double> t;            // plotted coordinate of each value (log10 x, x, or its index)
  std::vector<double> edges;        // cell edges, values.size() + 1
  int tic_every = 0;                // a tic every k values (0: as many as fit: 1, 2, 5, 10, ... apart)
  bool upright = false;             // x only: every name, turned upright (reading upwards) instead of thinned out;
                                    // the panel grows under its axes to hold the longest
};

// The axis of the values in `order` (first appearance) of option `name`, with the number each stands for (`num`;
// NaN: not numeric). Logarithmic when `log_ok` (a scale) or the numbers are geometric, all positive; linear when
// evenly spaced; else equal cells (sorted by number when every value has one, else in `order`). A name that stands
// for two numbers must be given NaN.
GridAxis grid_axis(const std::string& name, const std::string& label, const std::vector<std::string>& order,
                   const std::map<std::string, double>& num, bool log_ok);

struct GridPanel {
  std::string title;
  std::vector<double> v;  // (nx * ny): v[i * ny + j] at (x value i, y value j); NaN: no value
};

struct GridStyle {
  std::string cblabel;          // the colour box's label
  bool cblabel_plain = false;   // cblabel shown verbatim (a metric name), not as enhanced text
  std::string logy = "auto";    // the colour scale: auto (log when the values span decades) | on | off
  double lo = NAN, hi = NAN;    // a fixed colour range (NaN: the values')
  bool contours = true;         // draw contour lines (at `levels`, or round levels across the range)
  std::vector<double> levels;
  std::string what;             // the data file's description of the values
  double aspect = 0.8;          // a panel's height / width
};

// The figure (o.width wide; o.height, when given, sets the panels' height). Throws Error (one line, naming the
// fix) for levels that a log colour scale cannot show, or a width or height too small for the panels.
Figure grid_figure(const GridAxis& ax, const GridAxis& ay, const std::vector<GridPanel>& panels, const GridStyle& st,
                   const PlotOptions& o, const std::string& metric_name);

}  // namespace gradflow
