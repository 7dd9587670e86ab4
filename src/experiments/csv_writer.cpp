// csv_writer.cpp — see csv_writer.hpp.
#include "gradflow/experiments/csv_writer.hpp"

#include <cstdio>

#include "gradflow/core/error.hpp"

namespace gradflow {

CsvWriter::CsvWriter(const std::vector<std::string>& columns) : columns_(columns.size()) {
  std::vector<std::string> header;
  for (const auto& c : columns) header.push_back(csv_text(c));
  row(header);
}

void CsvWriter::row(const std::vector<std::string>& cells) {
  if (cells.size() != columns_)
    throw Error("CSV row of " + std::to_string(cells.size()) + " cells under a header of " +
                    std::to_string(columns_) + " columns; fix: report this as a bug",
                ErrorKind::Internal);
  for (size_t i = 0; i < cells.size(); ++i) text_ += (i ? "," : "") + cells[i];
  text_ += "\n";
}

std::string csv_text(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string csv_number(const nlohmann::ordered_json& v, const std::string& missing) {
  if (!v.is_number()) return missing;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v.get<double>());
  return buf;
}

}  // namespace gradflow
