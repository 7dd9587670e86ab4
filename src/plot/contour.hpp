// contour.hpp — contour lines of a scalar field sampled on a rectangular grid (marching squares, linear
// interpolation along the cell edges; a saddle cell is resolved by the mean of its four corners), and the "nice"
// levels to draw them at. Used by the phase-diagram figure (kind_phase_diagram.cpp); coordinates are whatever the
// figure plots (log10 of a scale, an index for categories).
#pragma once
#include <vector>

namespace gradflow {

struct Segment {
  double x0, y0, x1, y1;
};

// The pieces of the level-`level` line of v, where v[i * ny + j] is the value at (x[i], y[j]) (nx = x.size(),
// ny = y.size(), both ascending). A corner counts as inside when v >= level; squares with a non-finite corner are
// skipped (no line through a missing cell).
std::vector<Segment> contour_segments(const std::vector<double>& x, const std::vector<double>& y,
                                      const std::vector<double>& v, double level);

// About `target` round levels strictly inside (lo, hi): multiples of 1, 2, 2.5 or 5 times a power of ten (a
// linear colour scale); with `decades` (a log colour scale; lo, hi > 0) the powers of ten inside, else 1-2-5
// mantissas when fewer than two powers fit; at most target + 1 (every other one). Empty when lo >= hi.
std::vector<double> nice_levels(double lo, double hi, bool decades, int target = 5);

}  // namespace gradflow
