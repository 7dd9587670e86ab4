// report_files.cpp — see report_files.hpp.
#include "gradflow/experiments/report_files.hpp"

#include "gradflow/report/atomic_file.hpp"
#include "gradflow/report/json_text.hpp"

namespace gradflow {

void write_report(const nlohmann::ordered_json& report, const ReportWriters& writers, const ReportFiles& files,
                  std::ostream& table_out) {
  if (files.table) writers.table(table_out, report);
  if (!files.json.empty()) write_file_atomic(files.json, json_text(report, 1) + "\n");
  if (!files.csv.empty()) write_file_atomic(files.csv, writers.csv(report));
}

}  // namespace gradflow
