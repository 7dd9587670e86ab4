// registry.cpp — the one list of normalization placements. Adding a scheme: its own file in this folder (a final
// class deriving from Placement, see placement.hpp), one declaration and one line in the table below, and its
// section in docs/placements.md.
#include "gradflow/core/error.hpp"
#include "gradflow/model/placement.hpp"

namespace gradflow {

std::unique_ptr<Placement> make_post_placement();
std::unique_ptr<Placement> make_pre_placement();
std::unique_ptr<Placement> make_sandwich_placement();
std::unique_ptr<Placement> make_deepnorm_placement();
std::unique_ptr<Placement> make_rezero_placement();
std::unique_ptr<Placement> make_mix_placement();
std::unique_ptr<Placement> make_admin_placement();
std::unique_ptr<Placement> make_b2t_placement();
std::unique_ptr<Placement> make_normformer_placement();
std::unique_ptr<Placement> make_sub_ln_placement();
std::unique_ptr<Placement> make_nonorm_placement();
std::unique_ptr<Placement> make_lns_placement();
std::unique_ptr<Placement> make_reorder_placement();
std::unique_ptr<Placement> make_peri_placement();
std::unique_ptr<Placement> make_hybridnorm_placement();
std::unique_ptr<Placement> make_hybridnorm_star_placement();
std::unique_ptr<Placement> make_resi_dual_placement();
std::unique_ptr<Placement> make_parallel_placement();

const std::vector<std::unique_ptr<Placement>>& placements() {
  static const std::vector<std::unique_ptr<Placement>> table = [] {
    std::vector<std::unique_ptr<Placement>> t;
    for (auto* make : {make_post_placement, make_pre_placement, make_sandwich_placement, make_deepnorm_placement,
                       make_rezero_placement, make_mix_placement, make_admin_placement, make_b2t_placement,
                       make_normformer_placement, make_sub_ln_placement, make_nonorm_placement, make_lns_placement,
                       make_reorder_placement, make_peri_placement, make_hybridnorm_placement,
                       make_hybridnorm_star_placement, make_resi_dual_placement, make_parallel_placement})
      t.push_back(make());
    return t;
  }();
  return table;
}

const Placement& find_placement(const std::string& name) {
  std::string known;
  for (const auto& p : placements()) {
    if (p->name() == name) return *p;
    known += (known.empty() ? "" : ", ") + p->name();
  }
  throw Error("unknown placement '" + name + "'; fix: use one of " + known + " (see `gradflow placements`)");
}

std::string placement_display_name(const std::string& name) {
  for (const auto& p : placements())
    if (p->name() == name) return p->display_name();
  return name;
}

const std::vector<SchemeOption>& scheme_options() {
  static const std::vector<SchemeOption> all = [] {
    std::vector<SchemeOption> out;
    for (const auto& p : placements())
      for (auto& o : p->options()) {
        bool seen = false;
        for (const auto& q : out) {
          if (q.name != o.name) continue;
          seen = true;
          if (q.type != o.type)
            throw Error("internal: option --" + o.name + " is declared by two placements with different types",
                        ErrorKind::Internal);
        }
        if (!seen) out.push_back(std::move(o));
      }
    return out;
  }();
  return all;
}

std::string Placement::options_summary() const {
  std::string s;
  for (const auto& o : options()) {
    s += (s.empty() ? "--" : ", --") + o.name;
    if (o.type == SchemeOption::Type::Word) {
      std::string w;
      for (const auto& x : o.words) w += (w.empty() ? "" : "|") + x;
      s += " " + w;
    }
  }
  // --no-final-norm matters to the schemes with a final norm by default (for mix: when its top block is Pre-LN)
  ModelConfig probe;
  probe.placement = name();
  if (final_norm_default(probe)) s += (s.empty() ? "" : ", ") + std::string("--no-final-norm");
  return s + (s.empty() ? "" : ", ") + "--residual-scale";
}

}  // namespace gradflow
