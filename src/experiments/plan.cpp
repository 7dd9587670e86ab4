// plan.cpp — see plan.hpp.
#include "gradflow/experiments/plan.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>

#include "gradflow/core/error.hpp"

namespace gradflow {
namespace {

// Keeps [A-Za-z0-9._=-]; anything else becomes '-' (file names stay portable).
std::string safe(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '=' || c == '-';
    out += ok ? c : '-';
  }
  return out;
}

// Whether a and b are both numbers, written in full, of one value ("1" and "1.0", "1e-3" and "0.001").
bool same_number(const std::string& a, const std::string& b) {
  const auto number = [](const std::string& s, double& v) {
    char* end = nullptr;
    v = std::strtod(s.c_str(), &end);
    return !s.empty() && end == s.c_str() + s.size() && std::isfinite(v);
  };
  double x = 0, y = 0;
  return number(a, x) && number(b, y) && x == y;
}

}  // namespace

uint64_t repetition_seed(uint64_t base_seed, int repetition) { return base_seed + static_cast<uint64_t>(repetition); }

std::string Configuration::file_name() const {
  std::string name = safe(placement) + "_L" + std::to_string(depth);
  if (!value.empty()) name += "_" + safe(value);
  if (!value2.empty()) name += "_" + safe(value2);
  return name + "_s" + std::to_string(repetition) + ".json";
}

std::vector<std::string> split_list(const std::string& text, const std::string& option) {
  std::vector<std::string> out;
  std::string item;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == ',') {
      const auto b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
      require(b != std::string::npos, option + " '" + text + "' has an empty item; fix: e.g. " + option + " a,b,c");
      const std::string v = item.substr(b, e - b + 1);
      for (const auto& seen : out) {  // the same configuration twice would run twice and count as two groups
        const std::string twice = seen == v              ? "'" + v + "' twice"
                                  : same_number(seen, v) ? "one number twice, as '" + seen + "' and '" + v + "'"
                                                         : "";
        require(twice.empty(), option + " '" + text + "' names " + twice + "; fix: list each once");
      }
      out.push_back(v);
      item.clear();
    } else {
      item += text[i];
    }
  }
  return out;
}

std::vector<Configuration> plan_configurations(const PlanAxes& axes, const MakePoint& make) {
  require(!axes.placements.empty(), "no placement given; fix: e.g. --placements post,pre");
  require(!axes.depths.empty(), "no depth given; fix: e.g. --layers 6,12,24");
  require(axes.seeds >= 1, "--seeds must be at least 1 (got " + std::to_string(axes.seeds) + "); fix: e.g. --seeds 5");
  require(axes.param.empty() || !axes.values.empty(), "--param " + axes.param + " without --values; fix: e.g. --values 1,0.5");
  require(axes.param2.empty() || !axes.param.empty(),
          "--param2 " + axes.param2 + " without --param; fix: give the first axis with --param and --values");
  require(axes.param2.empty() || !axes.values2.empty(),
          "--param2 " + axes.param2 + " without --values2; fix: e.g. --values2 0.5,1,2");
  require(axes.param2.empty() || axes.param2 != axes.param,
          "--param2 " + axes.param2 + " is --param too; fix: sweep two different options (e.g. --param init-scale "
          "--param2 layers), or list every value in --values");
  const std::vector<std::string> values = axes.param.empty() ? std::vector<std::string>{""} : axes.values;
  const std::vector<std::string> values2 = axes.param2.empty() ? std::vector<std::string>{""} : axes.values2;
  std::vector<Configuration> out;
  int group = 0;
  for (const auto& p : axes.placements)
    for (Index depth : axes.depths)
      for (const auto& v : values)
        for (const auto& v2 : values2) {
          const PointConfig point = make(p, depth, v, v2);
          for (int r = 0; r < axes.seeds; ++r) {
            Configuration c;
            c.placement = p;
            c.depth = point.rc.model.layers;
            c.value = v;
            c.x = point.x;
            c.value2 = v2;
            c.x2 = point.x2;
            c.group = group;
            c.repetition = r;
            c.rc = point.rc;
            c.rc.init.seed = repetition_seed(axes.base_seed, r);
            out.push_back(std::move(c));
          }
          ++group;
        }
  // one file per configuration (--resume, plan tasks): values that differ only in the characters file_name
  // replaces would share one
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < out.size(); ++i) {
    const auto [at, fresh] = seen.emplace(out[i].file_name(), i);
    if (fresh) continue;
    const Configuration& a = out[at->second];
    const Configuration& b = out[i];
    throw Error("the configurations (" + a.value + (a.value2.empty() ? "" : ", " + a.value2) + ") and (" + b.value +
                (b.value2.empty() ? "" : ", " + b.value2) + ") of " + a.placement + " would share the result file " +
                at->first + "; fix: spell the values so that they differ in letters, digits, '.', '=' or '-'");
  }
  return out;
}

}  // namespace gradflow
