// style.hpp — the house style of gradflow figures: serif font, Okabe–Ito colour-blind-safe palette with a
// distinct marker and dash per series (readable in grey print), gnuplot string quoting, log-axis tics.
// Okabe & Ito (2008), "Color Universal Design"; the order puts the darkest colours first.
#pragma once
#include <string>
#include <vector>

namespace gradflow {

inline constexpr int kStyles = 8;  // palette entries: linetypes 1..8 (colour, marker, dash)
// The figures' text size in points, in every format. Enhanced-text sub- and superscripts are 0.8 of it (gnuplot's
// fixed ratio), so 9 pt keeps them at 7.2 pt, above the 7 pt a journal's figure text needs.
inline constexpr double kFontPt = 9;
// The smallest text a figure prints on purpose (contour labels): the 7 pt floor.
inline constexpr double kMinLabelPt = 7;
// A legend sample that shows only a marker and dash (the second factor of a two-way legend, "eval"/"train"): a
// grey no palette colour is, so it is never read as one of the series' colours.
inline constexpr const char* kNeutralColour = "lc rgb '#707070'";

// `set linetype k ...` for k = 1..kStyles: colour, marker, dash.
std::string palette_commands();
// The style of the k-th series (k = 0, 1, ...): linetype k+1 for k < kStyles; beyond, colour k mod 8 with a
// marker and dash that no earlier series of that colour has, so no two of the first kStyles² = 64 series look
// alike ("lt 1 pt 5 dt 4"). A figure with more lines than a reader can tell apart takes another
// form (docs/plotting.md, "Many series").
std::string series_style(int k);
// Two-way styling: the colour of palette entry k ("lt 1", its marker and dash to be overridden), and the marker and dash of palette
// entry k alone ("pt 7 dt 1"), so one factor can be shown by colour and another by marker and dash.
std::string colour_style(int k);
std::string mark_style(int k);
// The common look set after the palette: L-shaped border, outward tics, compact opaque legend. A multiplot
// panel repeats it after `reset`.
std::string base_style();
// A gnuplot single-quoted string literal ('' escapes a quote); newlines become spaces.
std::string gp_quote(const std::string& s);
// Text shown literally inside an enhanced-text string: gnuplot's markup characters (_ ^ { } @ & ~ \) escaped.
std::string gp_enhanced_literal(const std::string& s);
// A number as gnuplot and the data file read it back exactly ("%.17g"); NaN/Inf as "NaN" (gnuplot skips it).
std::string gp_num(double v);

// Whether positive values in [lo, hi] span more than a decade (the "log axis when values span decades" rule).
bool spans_decades(double lo, double hi);
// `set logscale AXIS` with readable tics: explicit 1-2-5 (or finer) tics when the range is under two decades,
// gnuplot's decade tics otherwise; sets the range padded by a few percent in log space. At most `max_tics`
// explicit tics (fewer, coarser ones when finer would crowd a short axis).
std::string log_axis(const std::string& axis, double lo, double hi, int max_tics = 8);

// A figure's --title broken at spaces into lines that fit `width_in` inches at kFontPt (a long title was cut off
// on both sides), and those lines as one gnuplot string expression ('line 1'."\n".'line 2'), and the inches of
// height they take above the axes.
std::vector<std::string> title_lines(const std::string& title, double width_in);
std::string gp_lines(const std::vector<std::string>& lines);
double title_band(const std::vector<std::string>& lines);

// `set AXIStics STEP` for a linear axis over [lo, hi]: the smallest step of 1, 2 or 5 times a power of ten that
// gives at most `max_tics` intervals (gnuplot's own choice ignores how short the axis is: 11 tics on an inch).
std::string linear_tics_step(const std::string& axis, double lo, double hi, int max_tics);

}  // namespace gradflow
