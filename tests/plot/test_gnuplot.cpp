// test_gnuplot.cpp — the gnuplot runner: terminals picked from the extension, a clean one-line error when
// gnuplot is missing (script and data still written, no figure), a failing script leaves no half-written figure.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

#include "gradflow/plot/gnuplot.hpp"
#include "gradflow/plot/kinds.hpp"
#include "plot/plot_fixtures.hpp"

using namespace gradflow;
using namespace gradflow::test;

namespace {

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_) ::setenv(name_.c_str(), old_.c_str(), 1);
    else ::unsetenv(name_.c_str());
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

PlotOptions simple_plot(const TempDir& dir, const std::string& out) {
  PlotOptions o;
  o.kind = "grad-by-depth";
  o.inputs = {write_json(dir, "r.json", analyze_report("post", 4, 1.0, 0.5))};
  o.output = dir.file(out);
  return o;
}

}  // namespace

TEST_CASE("the terminal follows the extension, sized in inches (PNG: pixels at --dpi)") {
  REQUIRE(terminal_line("a/b.pdf", 3.5, 2.5, 300).find("pdfcairo enhanced color size 3.500in,2.500in") != std::string::npos);
  REQUIRE(terminal_line("b.SVG", 3.5, 2.5, 300).find("svg enhanced size 252,180") != std::string::npos);
  REQUIRE(terminal_line("b.png", 3.5, 2.5, 200).find("pngcairo enhanced size 700,500") != std::string::npos);
  REQUIRE(error_of([] { terminal_line("b.eps", 3.5, 2.5, 300); }) ==
          "-o 'b.eps' has no known figure extension; fix: end it in .pdf, .svg or .png");
  REQUIRE(error_of([] { terminal_line("b.png", 3.5, 2.5, 5); }).find("--dpi 5 is out of range") == 0);
}

TEST_CASE("gnuplot missing: one clean line naming the package, script and data still written") {
  TempDir dir;
  SECTION("GRADFLOW_GNUPLOT points at a missing program") {
    ScopedEnv env("GRADFLOW_GNUPLOT", "/nonexistent/gnuplot");
    const PlotOptions o = simple_plot(dir, "g.pdf");
    const std::string e = error_of([&] { make_plot(o, "test"); });
    REQUIRE(e.find("cannot run gnuplot ('/nonexistent/gnuplot' from GRADFLOW_GNUPLOT") == 0);
    REQUIRE(e.find("fix: install it (apt-get install gnuplot-nox)") != std::string::npos);
    REQUIRE(e.find('\n') == std::string::npos);
    REQUIRE(std::filesystem::exists(dir.file("g.pdf.gp")));
    REQUIRE(std::filesystem::exists(dir.file("g.pdf.dat")));
    REQUIRE_FALSE(std::filesystem::exists(dir.file("g.pdf")));
  }
  SECTION("gnuplot not on an empty PATH") {
    ScopedEnv env("GRADFLOW_GNUPLOT", nullptr);
    ScopedEnv path("PATH", "");
    const PlotOptions o = simple_plot(dir, "g.svg");
    const std::string e = error_of([&] { make_plot(o, "test"); });
    REQUIRE(e.find("cannot run gnuplot ('gnuplot' on PATH") == 0);
    REQUIRE(e.find("apt-get install gnuplot-nox") != std::string::npos);
    REQUIRE(std::filesystem::exists(dir.file("g.svg.gp")));
    REQUIRE_FALSE(std::filesystem::exists(dir.file("g.svg")));
  }
}

TEST_CASE("a failing gnuplot script: an error with gnuplot's message, no figure, no temporary file", "[gnuplot]") {
  require_gnuplot();
  TempDir dir;
  PlotOptions o;
  o.output = dir.file("bad.png");
  o.width = 3.5;  // render_figure takes resolved sizes (make_plot resolves the 0 defaults)
  o.height = 2.5;
  Figure f;
  f.body = "plot data index 0 using 1:2 with nonsense\n";
  f.data = "0 1\n1 2\n";
  const std::string e = error_of([&] { render_figure(f, o, "test"); });
  INFO("message: " << e);
  REQUIRE(e.find("gnuplot failed on " + dir.file("bad.png.gp") + ": ") == 0);
  REQUIRE(e.find("unrecognized plot type") != std::string::npos);  // gnuplot's own words
  REQUIRE(e.find('\n') == std::string::npos);
  std::vector<std::string> files;
  for (const auto& x : std::filesystem::directory_iterator(dir.path())) files.push_back(x.path().filename().string());
  std::sort(files.begin(), files.end());
  REQUIRE(files == std::vector<std::string>{"bad.png.dat", "bad.png.gp"});
}

TEST_CASE("the script redraws the figure by itself, from its own folder", "[gnuplot]") {
  require_gnuplot();
  TempDir dir;
  PlotOptions o = simple_plot(dir, "again.svg");
  o.render = false;
  make_plot(o, "test");
  REQUIRE_FALSE(std::filesystem::exists(o.output));
  REQUIRE(std::system(("cd '" + dir.path() + "' && gnuplot again.svg.gp 2>/dev/null").c_str()) == 0);
  REQUIRE(xml_problem(read_bytes(o.output)) == "");
}

namespace {

// issue 39 item 1: `gradflow plot $'rep\nsystem("touch x")\n#.json'` once wrote that line into the script's header
std::string hostile_command(const std::string& marker) {
  return "gradflow plot rep\nsystem(\"touch " + marker + "\")\n#.json\\";
}

}  // namespace

TEST_CASE("no code runs from a file name: the command line only as a quoted string, a name with a newline refused") {
  TempDir dir;
  PlotOptions o = simple_plot(dir, "fig.svg");
  o.render = false;
  const std::string marker = dir.file("pwned");
  make_plot(o, hostile_command(marker));
  const std::string script = read_bytes(dir.file("fig.svg.gp"));
  REQUIRE(script.find("\nsystem(") == std::string::npos);
  REQUIRE_THAT(script, Catch::Contains("gradflow_command = 'gradflow plot rep\\x0Asystem(\"touch "));
  for (const std::string out : {"fig\nsystem(\"touch " + marker + "\")\n#.svg", std::string("sub\ndir/fig.svg")}) {
    PlotOptions bad = simple_plot(dir, out);
    try {
      make_plot(bad, "test");
      FAIL("a figure path with a newline was accepted");
    } catch (const Error& e) {
      REQUIRE_THAT(std::string(e.what()), Catch::Contains("control character") && Catch::Contains("fix:"));
      REQUIRE(std::string(e.what()).find('\n') == std::string::npos);
    }
  }
  REQUIRE_FALSE(std::filesystem::exists(marker));
}

TEST_CASE("no code runs from a file name: gnuplot reads the script and runs nothing", "[gnuplot]") {
  require_gnuplot();
  TempDir dir;
  PlotOptions o = simple_plot(dir, "fig.svg");
  o.render = false;
  const std::string marker = dir.file("pwned");
  make_plot(o, hostile_command(marker));
  REQUIRE(std::system(("cd '" + dir.path() + "' && gnuplot fig.svg.gp 2>/dev/null").c_str()) == 0);
  REQUIRE(xml_problem(read_bytes(o.output)) == "");
  REQUIRE_FALSE(std::filesystem::exists(marker));
}
