// report_files.hpp — how an experiment hands its report out, the same for compare/sweep and train-sweep: the
// table on stdout (unless quiet), then the JSON report and the long CSV, each file written atomically.
#pragma once
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace gradflow {

// The two views of one kind of report (experiment.hpp: print_experiment_table, experiment_csv; train/sweep.hpp).
struct ReportWriters {
  void (*table)(std::ostream&, const nlohmann::ordered_json&);
  std::string (*csv)(const nlohmann::ordered_json&);
};

struct ReportFiles {
  std::string json, csv;  // --json, --csv ("": not written)
  bool table = true;      // false with --quiet
};

void write_report(const nlohmann::ordered_json& report, const ReportWriters& writers, const ReportFiles& files,
                  std::ostream& table_out);

}  // namespace gradflow
