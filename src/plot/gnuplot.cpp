// gnuplot.cpp — see gnuplot.hpp. gnuplot runs by fork/exec (no shell, so no quoting of paths), in the figure's
// folder, with stdout and stderr captured; a close-on-exec pipe tells "could not start" from "failed".
#include "gradflow/plot/gnuplot.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "gradflow/core/error.hpp"
#include "gradflow/io/pending_child.hpp"
#include "gradflow/io/pending_temp_files.hpp"
#include "io/file_bytes.hpp"
#include "gradflow/plot/style.hpp"
#include "gradflow/report/atomic_file.hpp"
#include "gradflow/report/number_text.hpp"

namespace gradflow {
namespace {

constexpr double kMaxFigureInches = 100;  // a figure's largest side (a poster is about 48 in)
// pdfcairo and pngcairo draw a font of N points at 4/3 N (cairo's 96 dpi against the page's 72; pdfcairo's own
// default fontscale, 0.5, halves that again: 8 pt came out at 5.3 pt), and the SVG terminal at N: this scale makes
// kFontPt the size printed in every format (tests/plot/test_figure_layout.py reads it back from the PDF)
constexpr double kCairoFontScale = 0.75;

std::string lower_extension(const std::string& path) {
  std::string e = std::filesystem::path(path).extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return e;
}

// `s` with each control character written as \xNN: the command line a script records, which may name an input
// (a report's file name may hold a newline) and is only ever written inside a quoted string literal.
std::string escape_controls(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

// "" when `bytes` end as a whole file of the format does (PDF: the %%EOF marker; PNG: the IEND chunk; SVG: the
// closing </svg> tag, trailing white space allowed), else what is missing.
std::string missing_trailer(const std::string& bytes, const std::string& ext) {
  std::string end = bytes.substr(bytes.size() > 64 ? bytes.size() - 64 : 0);
  if (ext == ".png") {
    static const std::string iend("\0\0\0\0IEND\xAE\x42\x60\x82", 12);
    return end.size() >= 12 && end.compare(end.size() - 12, 12, iend) == 0 ? "" : "no PNG IEND chunk at its end";
  }
  while (!end.empty() && std::isspace(static_cast<unsigned char>(end.back()))) end.pop_back();
  if (ext == ".pdf") return end.size() >= 5 && end.compare(end.size() - 5, 5, "%%EOF") == 0 ? "" : "no PDF %%EOF at its end";
  if (ext == ".svg") return end.size() >= 6 && end.compare(end.size() - 6, 6, "</svg>") == 0 ? "" : "no closing </svg> tag";
  return "";
}

// Temporary files held for an interrupt (io/pending_temp_files.hpp) while they may exist, removed at the end.
class HeldTemps {
 public:
  explicit HeldTemps(std::vector<std::string> paths) : paths_(std::move(paths)) {
    for (const auto& p : paths_) slots_.push_back(io::hold_pending_temp(p));
  }
  ~HeldTemps() {
    std::error_code ec;
    for (size_t i = 0; i < paths_.size(); ++i) {
      std::filesystem::remove(paths_[i], ec);
      io::release_pending_temp(slots_[i]);
    }
  }
  HeldTemps(const HeldTemps&) = delete;
  HeldTemps& operator=(const HeldTemps&) = delete;

 private:
  std::vector<std::string> paths_;
  std::vector<int> slots_;
};

struct Run {
  int start_errno = 0;  // errno of a failed exec (0: gnuplot started)
  int status = 0;       // waitpid status
  std::string output;   // its stdout and stderr
};

// Runs argv[0] with `argv` in folder `dir`; never throws for a failing child.
Run run_in(const std::string& dir, const std::vector<std::string>& argv) {
  int out[2], err[2];
  if (::pipe(out) != 0 || ::pipe2(err, O_CLOEXEC) != 0) throw Error(std::string("pipe: ") + std::strerror(errno), ErrorKind::Internal);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(std::string("fork: ") + std::strerror(errno), ErrorKind::Internal);
  if (pid == 0) {  // child: only async-signal-safe calls from here
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    ::close(out[0]);
    ::close(out[1]);
    ::close(err[0]);
    int e = 0;
    if (::chdir(dir.c_str()) != 0) e = errno;
    else {
      ::execvp(args[0], args.data());
      e = errno;
    }
    if (::write(err[1], &e, sizeof e) < 0) {}
    ::_exit(127);
  }
  io::hold_pending_child(pid);  // an interrupt now stops and reaps gnuplot too (io/pending_child.hpp)
  ::close(out[1]);
  ::close(err[1]);
  Run r;
  if (::read(err[0], &r.start_errno, sizeof r.start_errno) <= 0) r.start_errno = 0;
  ::close(err[0]);
  char buf[4096];
  for (ssize_t k; (k = ::read(out[0], buf, sizeof buf)) != 0;) {
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) break;
    r.output.append(buf, static_cast<size_t>(k));
  }
  ::close(out[0]);
  // wait without reaping, let go of the child, then reap: an interrupt never signals a PID that was reused
  siginfo_t info;
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {}
  io::release_pending_child();
  while (::waitpid(pid, &r.status, 0) < 0 && errno == EINTR) {}
  return r;
}

// The line of gnuplot's output that says what went wrong (its messages look like `"g.gp" line 12: ...`).
std::string first_error(const std::string& text) {
  std::string best, line;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != '\n') { line += text[i]; continue; }
    const auto first = line.find_first_not_of(" \t^");
    if (first != std::string::npos) {
      line = line.substr(first);
      if (best.empty() || (line.find("line ") != std::string::npos && best.find("line ") == std::string::npos)) best = line;
    }
    line.clear();
  }
  return best.empty() ? "no output" : best;
}

}  // namespace

std::string terminal_line(const std::string& output, double w, double h, int dpi) {
  require(w > 0 && h > 0 && w <= kMaxFigureInches && h <= kMaxFigureInches,
          "--width/--height must be in (0, 100] inches; fix: e.g. --width 3.5");
  const std::string ext = lower_extension(output);
  char line[320];
  if (ext == ".pdf") {
    std::snprintf(line, sizeof line,
                  "set terminal pdfcairo enhanced color size %.3fin,%.3fin font 'serif,%g' fontscale %g rounded", w, h,
                  kFontPt, kCairoFontScale);
  } else if (ext == ".svg") {  // svg sizes are in points (72 per inch)
    std::snprintf(line, sizeof line, "set terminal svg enhanced size %ld,%ld font 'serif,%g' rounded background '#ffffff'",
                  std::lround(w * 72), std::lround(h * 72), kFontPt);
  } else if (ext == ".png") {  // pngcairo draws fonts and lines at 72 dpi: scale them to --dpi
    require(dpi >= 30 && dpi <= 2400, "--dpi " + std::to_string(dpi) + " is out of range; fix: use 72..600, e.g. --dpi 300");
    const double s = dpi / 72.0;
    std::snprintf(line, sizeof line,
                  "set terminal pngcairo enhanced size %ld,%ld font 'serif,%g' fontscale %.4g linewidth %.4g "
                  "pointscale %.4g rounded background '#ffffff'",
                  std::lround(w * dpi), std::lround(h * dpi), kFontPt, kCairoFontScale * s, s, s);
  } else {
    throw Error("-o '" + output + "' has no known figure extension; fix: end it in .pdf, .svg or .png");
  }
  return line;
}

std::string gnuplot_program() {
  const char* env = std::getenv("GRADFLOW_GNUPLOT");
  return env && *env ? env : "gnuplot";
}

RenderedFiles render_figure(const Figure& fig, const PlotOptions& o, const std::string& command_line) {
  namespace fs = std::filesystem;
  const double h = o.height > 0 ? o.height : o.width * fig.aspect + fig.extra_height;
  // the height follows from what is drawn (panels, legend entries): too much of it is the inputs', not the options'
  require(o.height > 0 || h <= kMaxFigureInches,
          "the figure would be " + number_text(std::round(h)) + " in tall for what the report holds (its panels and "
          "legend at width " + number_text(o.width) + " in), more than " + number_text(kMaxFigureInches) +
          " in; fix: plot a report of fewer groups (fewer placements, depths or values)");
  const std::string terminal = terminal_line(o.output, o.width, h, o.dpi);
  // nothing user-controlled reaches the script but as a quoted string literal (the command line below), and the
  // figure's own name and folder are written as literals and comments: one that no script line can hold is refused
  require(!io_detail::has_control_char(o.output),
          "-o '" + io_detail::printable(o.output) + "' holds a control character (a newline?), which no gnuplot script "
          "can name safely; fix: choose a figure path without one");
  const fs::path out(o.output);
  const std::string dir = out.parent_path().empty() ? "." : out.parent_path().string();
  // the script and data are named after the whole figure name (fig.pdf: fig.pdf.gp, fig.pdf.dat), so fig.pdf and
  // fig.png drawn side by side keep a script each
  const std::string name = out.filename().string();
  RenderedFiles files{(fs::path(dir) / (name + ".gp")).string(), (fs::path(dir) / (name + ".dat")).string(), {}};
  // the figure, its script and its data are outputs like any other: never an input (a report named fig.pdf, a
  // kept fig.dat plotted again, a .dat linked to a report), never each other (checked as files, links followed)
  std::vector<NamedPath> inputs;
  for (const auto& in : o.inputs) inputs.push_back({"the input", in});
  check_outputs({{"-o", o.output}, {"-o's script", files.script}, {"-o's data", files.data}}, inputs);

  std::string s;
  s += "# " + name + ".gp — written by gradflow " GRADFLOW_VERSION " (the command: gradflow_command below).\n";
  s += "# Edit freely, then redraw from this script's folder with:  gnuplot ./" + name + ".gp\n";
  s += "gradflow_command = " + gp_quote(escape_controls(command_line)) + "\n";
  s += "# Data: " + name + ".dat (blocks separated by two blank lines; `index i` selects block i).\n";
  s += "if (!exists(\"outfile\")) outfile = " + gp_quote(name) + "\n";
  s += "if (!exists(\"data\")) data = " + gp_quote(name + ".dat") + "\n";
  s += terminal + "\nset output outfile\nset encoding utf8\n";
  s += palette_commands();
  s += base_style();
  // a one-panel figure's title, in lines that fit its width (gnuplot makes room for them above the axes); a
  // multi-panel figure draws its own above its panels (fig.titled)
  if (!o.title.empty() && !fig.titled) s += "set title " + gp_lines(title_lines(o.title, o.width)) + " noenhanced\n";
  s += fig.body;
  s += "unset output\n";
  const auto write_script_and_data = [&] {
    write_file_atomic(files.data, fig.data);
    write_file_atomic(files.script, s);
  };
  if (!o.render) {
    write_script_and_data();
    return files;
  }

  // gnuplot draws from temporary copies of the script and data into a temporary figure, all three removed when
  // this returns or an interrupt strikes (io/pending_temp_files.hpp; the interrupt also stops gnuplot); the three
  // outputs are written only once the figure is whole, so an interrupted plot leaves nothing behind
  // (io_detail::temp_path_for: a name near the file system's limit gets a short temporary name; "./" before each
  // name gnuplot reads, so a name that starts with '-' is never taken for an option)
  const auto temp_name = [&](const std::string& path) {
    return "./" + fs::path(io_detail::temp_path_for(path)).filename().string();
  };
  const std::string tmp = temp_name(o.output), tmp_gp = temp_name(files.script), tmp_dat = temp_name(files.data);
  const std::string tmp_path = (fs::path(dir) / tmp).string();
  const HeldTemps held({tmp_path, (fs::path(dir) / tmp_gp).string(), (fs::path(dir) / tmp_dat).string()});
  write_file_atomic((fs::path(dir) / tmp_dat).string(), fig.data);
  write_file_atomic((fs::path(dir) / tmp_gp).string(), s);
  const std::string prog = gnuplot_program();
  const Run r = run_in(dir, {prog, "-e", "outfile=" + gp_quote(tmp) + "; data=" + gp_quote(tmp_dat), tmp_gp});
  const std::string rerun = "script " + files.script + " and data " + files.data + " are written: redraw with `cd " +
                            dir + " && gnuplot ./" + name + ".gp`";
  if (r.start_errno != 0) {
    write_script_and_data();
    const bool set = std::getenv("GRADFLOW_GNUPLOT") && *std::getenv("GRADFLOW_GNUPLOT");
    throw Error("cannot run gnuplot ('" + prog + "'" + (set ? " from GRADFLOW_GNUPLOT" : " on PATH") + ": " +
                std::strerror(r.start_errno) + "); fix: install it (apt-get install gnuplot-nox)" +
                (set ? " or point GRADFLOW_GNUPLOT at it" : " or set GRADFLOW_GNUPLOT to its path") + "; the " + rerun);
  }
  std::error_code ec;
  const bool ok = WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0 && fs::file_size(tmp_path, ec) > 0 && !ec;
  if (!ok) {
    write_script_and_data();
    std::string why = first_error(r.output);
    for (size_t k; (k = why.find(tmp_gp)) != std::string::npos;) why.replace(k, tmp_gp.size(), name + ".gp");
    throw Error("gnuplot failed on " + files.script + ": " + why +
                "; fix: edit the script and rerun it, or report the command that wrote it");
  }
  // the figure goes out like every other output (a regular file replaced atomically, a device or FIFO written as it
  // is, a link kept: report/atomic_file.hpp)
  const std::string bytes = io_detail::read_file_bytes(tmp_path);
  // gnuplot exits 0 when the disk fills under it: a figure without its format's ending is not written over the old
  const std::string missing = missing_trailer(bytes, lower_extension(o.output));
  require(missing.empty(), "gnuplot wrote an incomplete figure for " + o.output + " (" + missing + "; a full disk?); "
                           "fix: free space and rerun (the previous figure, if any, is kept)");
  write_script_and_data();
  write_file_atomic(o.output, bytes);
  return files;
}

}  // namespace gradflow
