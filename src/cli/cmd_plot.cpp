// cmd_plot.cpp — `gradflow plot REPORT.json [...] --kind KIND -o FIGURE.{pdf,svg,png}`: a paper-ready figure
// through gnuplot; the script FIGURE.pdf.gp and data FIGURE.pdf.dat stay beside it (docs/plotting.md).
#include <iostream>

#include "cli/commands.hpp"
#include "gradflow/plot/kinds.hpp"
#include "gradflow/plot/style.hpp"

namespace gradflow::cli {
namespace {

void run_plot(const PlotOptions& o, const std::string& command_line) {
  const RenderedFiles f = make_plot(o, command_line);
  for (const auto& s : f.skipped) std::cerr << "gradflow plot: skipped " << s << "\n";
  std::cerr << "gradflow plot: " << (o.render ? o.output + " (script " + f.script + ", data " + f.data + ")"
                                              : f.script + " and " + f.data + " (not rendered)")
            << "\n";
}

}  // namespace

void setup_plot(CLI::App& app) {
  auto opts = std::make_shared<PlotOptions>();
  std::string kinds;
  for (const auto& k : plot_kinds()) kinds += (kinds.empty() ? "" : " | ") + k;
  auto* sub = app.add_subcommand("plot", "draw a figure from reports (gnuplot; script and data kept beside it)");
  sub->add_option("inputs", opts->inputs, "analyze/compare/sweep reports (.json), or a Jacobian (.npy) for heatmap/spectrum")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--kind", opts->kind, kinds)->required();
  sub->add_option("-o,--output", opts->output, "the figure: .pdf, .svg or .png (the extension picks the format)")->check(non_empty_path())->required();
  sub->add_option("--width", opts->width, "width in inches (default 3.5: one column; claims 7: two)")->check(CLI::Range(0.5, 40.0));
  sub->add_option("--height", opts->height, "height in inches (default: the kind's aspect ratio)")->check(CLI::Range(0.0, 40.0));
  sub->add_option("--dpi", opts->dpi, "PNG resolution (pixels = inches x dpi)")->capture_default_str()->check(CLI::Range(30, 2400));
  sub->add_option("--param", opts->param, "grad-by-depth: a parameter's gradient norm, e.g. linear2.weight");
  sub->add_option("--metric", opts->metric, "sensitivity/claims/phase-diagram: scalar metric (default "
                                            "summary.bottom_to_top_grad_ratio; train-sweep: converged_fraction); "
                                            "list: print the inputs' metrics");
  sub->add_option("--levels", opts->levels, "phase-diagram: contour levels, e.g. 0.5,0.9 (default: round values)")
      ->delimiter(',');
  sub->add_option("--matrix", opts->matrix, "spectrum: P (product P_l) or B (block B_l)")->capture_default_str();
  sub->add_option("--at", opts->at, "spectrum: layers l to draw (default: bottom and top)")->delimiter(',');
  sub->add_option("--tokens", opts->tokens, "heatmap: tokens n of the Jacobian (the --seq-len it was made with): marks token blocks")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--title", opts->title, "a title above the plot");
  sub->add_option("--logy", opts->logy, "auto | on | off (auto: log when values span decades; phase-diagram: the "
                                        "colour scale)")->capture_default_str();
  sub->add_option("--logx", opts->logx, "loss-curves, grad-over-training: log step axis (on | off | auto)")->capture_default_str();
  sub->add_flag("--no-render", [opts](int64_t) { opts->render = false; }, "write the script and data, do not run gnuplot");
  sub->callback([opts] {
    if (opts->metric == "list") {  // the metrics each input holds, one per line; nothing drawn
      for (const PlotInput& in : load_inputs(opts->inputs)) {
        if (opts->inputs.size() > 1) std::cout << in.path << ":\n";
        for (const auto& name : metric_names(in)) std::cout << name << "\n";
      }
      return;
    }
    std::string cl = "gradflow plot";  // recorded in the script's header
    for (const auto& in : opts->inputs) cl += " " + in;
    cl += " --kind " + opts->kind + " -o " + opts->output;
    if (!opts->param.empty()) cl += " --param " + opts->param;
    if (!opts->metric.empty()) cl += " --metric " + opts->metric;
    if (!opts->levels.empty()) {
      cl += " --levels ";
      for (size_t i = 0; i < opts->levels.size(); ++i) cl += (i ? "," : "") + gp_num(opts->levels[i]);
    }
    if (opts->tokens > 0) cl += " --tokens " + std::to_string(opts->tokens);
    run_plot(*opts, cl);
  });
}

}  // namespace gradflow::cli
