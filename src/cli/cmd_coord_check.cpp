// cmd_coord_check.cpp — `gradflow coord-check [train options] --widths 64,128,256 [--depths 2,4,8] [--steps 5]
// [--seeds 3] [--band 0.25] --json cc.json`: microsoft/mup's coordinate check for width and depth
// (train/coord_check.hpp, docs/training.md "Coordinate checks"); the report is written atomically.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli/commands.hpp"
#include "gradflow/commands/train_command.hpp"
#include "gradflow/experiments/plan.hpp"
#include "gradflow/report/atomic_file.hpp"
#include "gradflow/run/model_settings.hpp"
#include "gradflow/train/coord_check.hpp"
#include "gradflow/report/json_text.hpp"

namespace gradflow::cli {
namespace {
struct CoordCmdOptions {
  TrainRequest request;
  std::string widths, depths, json;
  int seeds = 3;
  double band = 0.25;
  bool quiet = false;
};

std::vector<Index> sizes(const std::string& text, const std::string& option) {
  std::vector<Index> v;
  if (text.empty()) return v;
  for (const auto& item : split_list(text, option)) v.push_back(parse_integer(item, option.substr(2)));
  return v;
}

void print_summary(std::ostream& os, const nlohmann::ordered_json& r) {
  for (const auto& axis : r["axes"]) {
    os << "coord-check over " << axis["axis"].get<std::string>() << " " << axis["sizes"].dump()
       << ": growth exponent of mean |entry| per step (seeds' mean ± standard error)\n";
    char line[160];
    std::string last;
    for (const auto& v : axis["verdicts"]) {
      const std::string q = v["quantity"].get<std::string>();
      if (q != last) os << "  " << q << "\n";
      last = q;
      const double b = v["exponent"].is_number() ? v["exponent"].get<double>() : NAN;
      const double se = v["stderr"].is_number() ? v["stderr"].get<double>() : NAN;
      std::snprintf(line, sizeof line, "    t=%-3ld %+7.3f ± %-6.3f %s\n", v["t"].get<long>(), b, se,
                    v["verdict"].get<std::string>().c_str());
      os << line;
    }
  }
}

void run_coord_check(const CLI::App& sub, const CoordCmdOptions& o) {
  CoordCheckConfig c;
  c.widths = sizes(o.widths, "--widths");
  c.depths = sizes(o.depths, "--depths");
  // a parametrization's unset bases: the smallest size checked (the model's own where that axis is not checked),
  // set before the model is validated
  TrainRequest r = o.request;
  Parametrization& p = r.flags.model.rc.model.param;
  if (p.scales_width() && p.base_width == 0 && !c.widths.empty())
    p.base_width = *std::min_element(c.widths.begin(), c.widths.end());
  if (p.scales_depth() && p.base_depth == 0 && !c.depths.empty())
    p.base_depth = *std::min_element(c.depths.begin(), c.depths.end());
  if (p.scales_width() && p.base_width == 0) p.base_width = r.flags.model.rc.model.d_model;
  if (p.scales_depth() && p.base_depth == 0) p.base_depth = r.layers;
  c.base = resolve_train_request(sub, r);
  if (sub.get_option("--steps")->count() == 0) c.base.steps = 5;  // mup's coord_check: a few steps
  c.seeds = o.seeds;
  c.band = o.band;
  c = resolve_coord_check(c);
  check_outputs({{"--json", o.json}}, {});
  const auto report = coord_check(c);
  if (!o.quiet) print_summary(std::cout, report);
  if (!o.json.empty()) write_file_atomic(o.json, json_text(report, 1) + "\n");
}
}  // namespace

void setup_coord_check(CLI::App& app) {
  auto opts = std::make_shared<CoordCmdOptions>();
  auto* sub = app.add_subcommand("coord-check", "coordinate check (mup): activation and update sizes over a few "
                                                "Adam steps against width and/or depth, with a growth verdict");
  add_train_options(*sub, opts->request);
  sub->add_option("--widths", opts->widths, "d_model values, e.g. 64,128,256,512 (d_ff and --head-dim scale with d)");
  sub->add_option("--depths", opts->depths, "layer counts, e.g. 2,4,8,16");
  sub->add_option("--seeds", opts->seeds, "seeds per size (--seed, +1, ...)")->capture_default_str();
  sub->add_option("--band", opts->band, "|growth exponent| at most this is stable")->capture_default_str();
  sub->add_option("--json", opts->json, "write the coord-check report to this file")->check(non_empty_path());
  sub->add_flag("-q,--quiet", opts->quiet, "no summary");
  sub->callback([sub, opts] { run_coord_check(*sub, *opts); });
}

}  // namespace gradflow::cli
