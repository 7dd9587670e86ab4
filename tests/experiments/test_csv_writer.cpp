// test_csv_writer.cpp — the one CSV writer (experiments/csv_writer.hpp) and the one way an experiment's table,
// JSON and CSV are written (experiments/report_files.hpp).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "gradflow/core/error.hpp"
#include "gradflow/experiments/csv_writer.hpp"
#include "gradflow/experiments/report_files.hpp"

using namespace gradflow;
using Json = nlohmann::ordered_json;

TEST_CASE("CsvWriter: header, rows of exactly one cell per column", "[experiments][quick]") {
  CsvWriter w({"placement", "metric", "mean"});
  w.row({"post", csv_text("a,b"), csv_number(Json(0.1), "nan")});
  w.row({"pre", csv_text("say \"x\""), csv_number(Json(), "nan")});
  REQUIRE(w.str() == "placement,metric,mean\npost,\"a,b\",0.10000000000000001\npre,\"say \"\"x\"\"\",nan\n");
  REQUIRE_THROWS_AS(w.row({"post", "x"}), Error);
}

TEST_CASE("csv_number: 17 significant digits, the missing text for anything but a number", "[experiments][quick]") {
  REQUIRE(csv_number(Json(1.0 / 3.0), "") == "0.33333333333333331");
  REQUIRE(csv_number(Json(7), "") == "7");
  REQUIRE(csv_number(Json("n/a"), "-") == "-");
  REQUIRE(csv_text("plain") == "plain");
  REQUIRE(csv_text("two\nlines") == "\"two\nlines\"");
}

namespace {
void table(std::ostream& os, const Json& r) { os << "table of " << r["name"].get<std::string>() << "\n"; }
std::string csv(const Json& r) { return "name\n" + r["name"].get<std::string>() + "\n"; }
std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("write_report: the table, then the JSON and the CSV when asked for", "[experiments][quick]") {
  const auto dir = std::filesystem::temp_directory_path() / ("gradflow_report_files_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const Json report = Json{{"name", "x"}, {"values", {1, 2}}};
  std::ostringstream out;
  write_report(report, ReportWriters{table, csv}, ReportFiles{(dir / "r.json").string(), (dir / "r.csv").string(), true},
               out);
  REQUIRE(out.str() == "table of x\n");
  REQUIRE(read((dir / "r.json").string()) == report.dump(1) + "\n");
  REQUIRE(read((dir / "r.csv").string()) == "name\nx\n");
  std::ostringstream quiet;
  write_report(report, ReportWriters{table, csv}, ReportFiles{"", "", false}, quiet);
  REQUIRE(quiet.str().empty());
  std::filesystem::remove_all(dir);
}
