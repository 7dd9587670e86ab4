// gnuplot.hpp — a figure as a gnuplot script plus one data file, written next to the output and rendered by
// running gnuplot (Debian's gnuplot-nox, cairo terminals). For FIG.svg: FIG.svg.gp and FIG.svg.dat beside it (named
// after the whole figure name, so FIG.pdf and FIG.png keep one each), so an author can edit the script and rerun
// `cd DIR && gnuplot FIG.svg.gp`.
#pragma once
#include <string>
#include <vector>

#include "gradflow/plot/options.hpp"

namespace gradflow {

// What a figure kind produces; the renderer adds the terminal, output, fonts and palette in front of `body`.
struct Figure {
  std::string body;     // gnuplot commands; the data file is the gnuplot string variable `data`
  std::string data;     // the data file: blocks (one per series) separated by two blank lines = `index i`
  double aspect = 0.75; // default height / width
  double extra_height = 0;  // inches added to the default height (a legend below the axes)
  bool titled = false;      // the figure drew --title itself (a multi-panel figure, above its panels)
};

// The cairo terminal line for `output` ("set terminal pdfcairo size 3.5in,2.6in ..."), picked by extension;
// throws Error (exit 2) naming -o and the accepted extensions otherwise.
std::string terminal_line(const std::string& output, double width_in, double height_in, int dpi);

// The gnuplot program to run: $GRADFLOW_GNUPLOT when set, else "gnuplot" (found on PATH).
std::string gnuplot_program();

struct RenderedFiles {
  std::string script, data;          // paths of FIG.svg.gp and FIG.svg.dat (for FIG.svg)
  std::vector<std::string> skipped;  // inputs the kind leaves out, each "PATH (why)" (claims: train reports)
};

// Writes FIG.svg.gp and FIG.svg.dat (atomically) next to o.output, then, when o.render, runs gnuplot in that directory
// with outfile set to a temporary name and renames it to o.output on success (so no half-written figure is
// left). Throws Error: gnuplot missing (naming `apt-get install gnuplot-nox`, script and data still written),
// or gnuplot failing (its first error line).
RenderedFiles render_figure(const Figure& fig, const PlotOptions& o, const std::string& command_line);

}  // namespace gradflow
