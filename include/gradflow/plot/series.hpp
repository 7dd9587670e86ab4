// series.hpp — the line figure most kinds share: one line per series (y against x) with an optional spread
// (a shaded band or error bars from lo to hi), axis labels carrying the quantity's symbol, log axes when the
// values span decades, and the legend put in the corner the data leave empty.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "gradflow/plot/gnuplot.hpp"

namespace gradflow {

struct Series {
  std::string title;            // legend entry (shown verbatim: no enhanced-text markup)
  std::vector<double> x, y;     // (m,), (m,)
  std::vector<double> lo, hi;   // (m,) each, or empty: the spread drawn around y
  int style = 0;                // palette style 1..kStyles; 0: the series' position
  std::string style_spec;       // overrides the style: e.g. "lt 1 pt 5 dt 2" (colour of 1, marker and dash set here)
  bool enhanced = false;        // the title is enhanced text (symbols, subscripts)
  bool key_only = false;        // a legend entry only (gnuplot keyentry): no data
};

struct LineFigure {
  std::vector<Series> series;
  std::string xlabel, ylabel;                      // gnuplot enhanced text
  std::string spread = "band";                     // band | errorbars
  std::string logy = "auto", logx = "off";         // auto | on | off
  std::vector<std::pair<double, std::string>> xtics;  // categorical x labels (empty: numeric tics)
  bool integer_x = false;                          // x is a layer index: integer tics only
  bool ylabel_plain = false;                       // ylabel is a metric name: no enhanced-text markup
  int point_interval = 1;                          // a marker every k points (long series: spectra)
  std::string extra;                               // more gnuplot commands before `plot`
  double aspect = 0.75;
};

// The figure; its series are data blocks first_block, first_block + 1, ... (several panels share one data file).
Figure line_figure(const LineFigure& f, int first_block = 0);

// The legend position: the corner of the plot ("top left", ...) that no point or line crosses, else above the
// plot; coordinates are taken in log space on log axes.
std::string emptiest_corner(const std::vector<Series>& series, bool logx, bool logy);

// "set xtics STEP\n" for a linear x axis from 0 to the largest x: about 4-5 tics on a 3.5 in axis, STEP 1, 2 or 5
// times a power of ten ("" when there is no positive x).
std::string round_xtics(const std::vector<Series>& series);

}  // namespace gradflow
