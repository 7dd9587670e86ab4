// cmd_placements.cpp — `gradflow placements`: every normalization scheme, its block equation, paper, options;
// then the norm kinds, the decoder blocks' options and their --arch presets, and the init presets. Details:
// docs/placements.md.
#include <iostream>

#include "cli/commands.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/model/placement.hpp"
#include "gradflow/run/arch_presets.hpp"

namespace gradflow::cli {

void setup_placements(CLI::App& app) {
  auto* sub = app.add_subcommand("placements", "list the normalization placements (--placement NAME)");
  sub->callback([] {
    for (const auto& p : placements()) {
      std::cout << p->name() << "\n  block:   " << p->equation() << "\n  paper:   " << p->paper()
                << "\n  options: " << p->options_summary() << "\n";
    }
    std::cout << "peri is an alias of sandwich (Peri-LN's block is Sandwich-LN's; same numbers).\n"
                 "resi-dual's state is the pair [x_a | x_d] (n, 2d): B_l is 2N x 2N, P_l is N x 2N (docs/math.md §12).\n";
    std::cout << "Norm kinds for any placement: --norm layernorm|rmsnorm|dyt.\n"
                 "Decoder blocks, any placement: --ffn mlp|swiglu|geglu, --bias on|off, --qkv-bias, --kv-heads K, "
                 "--head-dim e, --rope (--rope-theta, --rotary-fraction), --qk-norm none|head|proj, --attn-softcap C, "
                 "--attn-scale S; parallel: --shared-norm.\n"
                 "Presets (--arch NAME; an option given explicitly wins):\n";
    for (const ArchPreset& a : arch_presets()) {
      std::string opts;
      for (const auto& [name, value] : a.options) opts += " --" + name + (value == "true" ? "" : " " + value);
      std::cout << "  " << a.name << ": " << a.note << (opts.empty() ? "" : "\n     " + opts) << "\n";
    }
    std::string inits;
    for (const auto& s : init_schemes()) inits += (inits.empty() ? "" : "|") + s;
    std::cout << "Init presets: --init " << inits << " (--init-scale C multiplies on top). Details: docs/placements.md\n";
  });
}

}  // namespace gradflow::cli
