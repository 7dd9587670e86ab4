// style.hpp — the house style of gradflow figures: serif font, Okabe–Ito colour-blind-safe palette with a
// distinct marker and dash per series (readable in grey print), gnuplot string quoting, log-axis tics.
// Okabe & Ito (2008), "Color Universal Design"; the order puts the darkest colours first.
#pragma once
#include <string>
#include <vector>

namespace gradflow {

inline constexpr int kStyles = 8;  // series styles 1..8 (linetype k), then they repeat

// `set linetype k ...` for k = 1..kStyles: colour, marker, dash.
std::string palette_commands();
// The common look set after the palette: L-shaped border, outward tics, compact opaque legend. A multiplot
// panel repeats it after `reset`.
std::string base_style();
// A gnuplot single-quoted string literal ('' escapes a quote); newlines become spaces.
std::string gp_quote(const std::string& s);
// A number as gnuplot and the data file read it back exactly ("%.17g"); NaN/Inf as "NaN" (gnuplot skips it).
std::string gp_num(double v);

// Whether positive values in [lo, hi] span more than a decade (the "log axis when values span decades" rule).
bool spans_decades(double lo, double hi);
// `set logscale AXIS` with readable tics: explicit 1-2-5 (or finer) tics when the range is under two decades,
// gnuplot's decade tics otherwise; sets the range padded by a few percent in log space.
std::string log_axis(const std::string& axis, double lo, double hi);

}  // namespace gradflow
