// verdict_spec.cpp — see claim_verdicts.hpp: the check of a spec's "verdicts" list, apart from deciding them, so
// that the spec reader (and its fuzz target, tests/fuzz) needs neither the statistics nor the report.
#include <limits>

#include "gradflow/core/error.hpp"
#include "gradflow/experiments/claim_verdicts.hpp"
#include "gradflow/report/fields.hpp"

namespace gradflow {
using Json = nlohmann::ordered_json;
using namespace fields;

const char* const kVerdictFix = "; fix: see docs/experiments.md, \"Claims decided at a level\"";

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const char* const kKeys[] = {"says", "metric", "group", "numerator", "denominator", "expect", "than", "level"};

}  // namespace

void check_verdict_specs(const Json& verdicts, const std::string& where) {
  require(verdicts.is_array(), where + ": \"verdicts\" must be a list of statements" + kVerdictFix);
  for (size_t i = 0; i < verdicts.size(); ++i) {
    const Json& v = verdicts[i];
    const std::string at = where + ": verdicts[" + std::to_string(i) + "]";
    require(v.is_object(), at + " must be an object" + kVerdictFix);
    for (const auto& [k, x] : v.items()) {
      bool known = false;
      for (const char* key : kKeys) known = known || k == key;
      require(known, at + ": unknown key \"" + k + "\"" + kVerdictFix);
    }
    require(v.contains("says") && v["says"].is_string() && v.contains("metric") && v["metric"].is_string(),
            at + " needs \"says\" and \"metric\" (strings)" + kVerdictFix);
    require(v.contains("expect") && (v["expect"] == "less" || v["expect"] == "greater"),
            at + ": \"expect\" must be \"less\" or \"greater\"" + kVerdictFix);
    if (v.contains("level")) {
      const double level = v["level"].is_number() ? v["level"].get<double>() : kNaN;
      require(level > 0 && level < 1, at + ": \"level\" " + v["level"].dump() +
                                          " must lie strictly between 0 and 1; fix: e.g. \"level\": 0.95");
    }
    const bool group = v.contains("group"), pair = v.contains("numerator") || v.contains("denominator");
    require(group != pair, at + " needs either \"group\" (with \"than\") or \"numerator\" and \"denominator\"" + kVerdictFix);
    require(!group || (v.contains("than") && v["than"].is_number()),
            at + ": a \"group\" is compared with \"than\", a number" + kVerdictFix);
    require(group || (v.contains("numerator") && v.contains("denominator")),
            at + ": a pair needs both \"numerator\" and \"denominator\"" + kVerdictFix);
    require(!v.contains("than") || v["than"].is_number(), at + ": \"than\" must be a number" + kVerdictFix);
    for (const char* key : {"group", "numerator", "denominator"}) {
      if (!v.contains(key)) continue;
      const Json& s = v[key];
      require(s.is_object() && !s.empty(), at + ": \"" + key + "\" must select a group, e.g. {\"placement\": \"post\", "
                                                "\"layers\": 24}" + kVerdictFix);
      for (const auto& [k, x] : s.items()) {
        const bool ok = (k == kPlacement && x.is_string()) || (k == kLayers && x.is_number_integer()) ||
                        ((k == kValue || k == kValue2) && (x.is_string() || x.is_number()));
        require(ok, at + ": \"" + key + "\": \"" + k + "\" is not placement (a string), layers (a whole number), "
                         "value or value2" + kVerdictFix);
      }
    }
  }
}

}  // namespace gradflow
