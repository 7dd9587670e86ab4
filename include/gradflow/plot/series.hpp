// series.hpp — the line figure most kinds share: one line per series (y against x) with an optional spread
// (a shaded band or error bars from lo to hi), axis labels carrying the quantity's symbol, log axes when the
// values span decades, and the legend put in the corner the data leave empty.
#pragma once
#include <cmath>
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
  std::string with;             // gnuplot plot style ("lines"); empty: linespoints (errorbars: yerrorlines)
};

inline constexpr int kMaxKeyInside = 4;  // a legend with more entries than this goes below the axes
// The most lines one panel draws: more cannot be told apart, and gnuplot reads the data file once per line (`index
// i`), so its time grows with their square (measured, jacobian-norms of a compare report: 100 groups 3.5 s, 200
// 14 s, 400 53 s on the 2-core VM).
inline constexpr int kMaxSeries = 200;

struct LineFigure {
  std::vector<Series> series;
  std::string xlabel, ylabel;                      // gnuplot enhanced text
  std::string spread = "band";                     // band | errorbars
  std::string logy = "auto", logx = "off";         // auto | on | off
  std::vector<std::pair<double, std::string>> xtics;  // categorical x labels (empty: numeric tics)
  bool integer_x = false;                          // x is a layer index: integer tics only
  bool categorical = false;                        // x is 0, 1, ... naming the xtics' categories
  bool ylabel_plain = false;                       // ylabel is a metric name: no enhanced-text markup
  int point_interval = 1;                          // a marker every k points (long series: spectra); 0: per
                                                   // series, every point up to 12, else about 8 markers
  std::string extra;                               // more gnuplot commands before `plot`
  double aspect = 0.75;
  double width = 3.5;         // inches across the figure (a panel: across the panel): the legend's columns
  std::string key = "auto";   // auto: inside, in the corner no data cross, when that corner exists and the legend
                              // has at most kMaxKeyInside entries, else below the axes | below | none
  int key_rows = 0;           // rows of a legend below the axes (0: as few as the width allows); entries fill
                              // the legend column by column
  std::string title;          // a panel's title (multi-panel figures)
  double height = 0;          // inches of the axes' height (0: from width and aspect): how many y tics fit
  double y_lo = NAN, y_hi = NAN;  // the y range to show instead of the data's (small multiples share one)
};

// The size of a legend below the axes: rows, columns and height in inches, for `titles` on `width` inches.
struct KeyBox {
  int rows = 0, cols = 0;
  double height = 0;
};
KeyBox key_box(const std::vector<std::string>& titles, double width, int rows = 0);

// A two-way legend for series coloured by one factor and marked (marker and dash) by another: a coloured line
// per level of the first (the legend's first column), a black marker and dash per level of the second (its
// second column); use with key_rows = the larger number of levels (size() / 2). Colour k and mark k are
// style.hpp's colour_style(k), mark_style(k).
std::vector<Series> two_way_legend(const std::vector<std::string>& colours, const std::vector<std::string>& marks);

// Items (reports, groups, runs) described by their factor values ({"post", "L=12"}, as report_factors gives):
// when exactly two factors vary between them, each item's level of the first (drawn as colour) and of the
// second (drawn as marker and dash), levels in order of first appearance; empty `colour` otherwise.
struct TwoWay {
  std::vector<int> colour, mark;          // per item
  std::vector<std::string> colours, marks;  // the level names: two_way_legend(colours, marks)
};
TwoWay two_way(const std::vector<std::vector<std::string>>& factors);
// The style of item i under t: colour_style(colour[i]) with mark_style(mark[i]).
std::string two_way_style(const TwoWay& t, size_t i);
// The shared legend of items styled two_way_style(t, i), or series_style(i) when t.colour is empty: the two-way
// legend, or one key per item titled titles[i]; and the legend rows panel_figure takes for it (0: as few as fit).
std::vector<Series> items_legend(const TwoWay& t, const std::vector<std::string>& titles);
int items_legend_rows(const TwoWay& t);

// Small multiples: the panels on a grid of `cols` columns, each panel's axes `panel_height` inches tall, axes of a
// row aligned, a panel's own legend inside it or below its axes, and one shared legend (`legend`: key-only
// series, `legend_rows` rows, 0: as few as fit) centred below the grid. Sets the figure's aspect for `width`.
// `title` (--title), when given, above the panels in lines that fit the width.
Figure panel_figure(std::vector<LineFigure> panels, const std::vector<Series>& legend, int cols, double width,
                    double panel_height, int legend_rows = 0, const std::string& title = "");

// The figure; its series are data blocks first_block, first_block + 1, ... (several panels share one data file).
Figure line_figure(const LineFigure& f, int first_block = 0);

// The legend position: the corner of the plot ("top left", ...) that no point or line crosses, else "below"
// (the axes); coordinates are taken in log space on log axes.
std::string emptiest_corner(const std::vector<Series>& series, bool logx, bool logy);

// "set xtics STEP\n" for a linear x axis from 0 to the largest x: about 4-5 tics on a 3.5 in axis, STEP 1, 2 or 5
// times a power of ten ("" when there is no positive x).
std::string round_xtics(const std::vector<Series>& series);

}  // namespace gradflow
