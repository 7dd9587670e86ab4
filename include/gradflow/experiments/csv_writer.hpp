// csv_writer.hpp — the one writer of gradflow's long-format CSVs (compare/sweep, train-sweep, train): a header
// row naming the columns, then rows of exactly that many cells. Cells are text (quoted when they hold a comma, a
// quote or a newline: RFC 4180) or numbers with 17 significant digits ("%.17g", so they read back exactly).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gradflow {

class CsvWriter {
 public:
  explicit CsvWriter(const std::vector<std::string>& columns);
  // One row; throws an internal Error when it does not have one cell per column.
  void row(const std::vector<std::string>& cells);
  const std::string& str() const { return text_; }

 private:
  size_t columns_;
  std::string text_;
};

// A text cell: `s`, quoted when it holds ',', '"' or a newline ('"' doubled).
std::string csv_text(const std::string& s);
// A number cell: "%.17g"; `missing` when `v` is not a number (null, a string).
std::string csv_number(const nlohmann::ordered_json& v, const std::string& missing);

}  // namespace gradflow
