// json_text.hpp — a report as text, whatever bytes its strings hold. A path read from the command line or the file
// system (a --weights folder, --input, --checkpoint-dir) may hold bytes that are not UTF-8 (a Latin-1 name), which
// JSON cannot carry; nlohmann's dump then throws, and a finished run would be lost to the report writer. Here each
// byte of a string (or key) that is not part of valid UTF-8 is written as the four characters \xNN (in the JSON
// text "\\xNN"; docs/report-schema.md, "Strings"), and every valid string is written as it is.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace gradflow {

// `j` with every string and key made valid UTF-8 as above (a copy; `j` itself when it already is).
nlohmann::ordered_json utf8_safe(const nlohmann::ordered_json& j);

// utf8_safe(j).dump(indent): the text every report, result and plan is written as.
std::string json_text(const nlohmann::ordered_json& j, int indent = -1);

}  // namespace gradflow
