// cmd_placements.cpp — `gradflow placements`: every normalization scheme, its block equation, paper, options.
#include <iostream>

#include "cli/commands.hpp"
#include "gradflow/model/placement.hpp"

namespace gradflow::cli {

void setup_placements(CLI::App& app) {
  auto* sub = app.add_subcommand("placements", "list the normalization placements (--placement NAME)");
  sub->callback([] {
    for (const auto& p : placements()) {
      std::cout << p.name << "\n  block:   " << p.equation << "\n  paper:   " << p.paper
                << "\n  options: " << p.options << "\n";
    }
    std::cout << "Norm kinds for any placement: --norm layernorm|rmsnorm|dyt. Details: docs/placements.md\n";
  });
}

}  // namespace gradflow::cli
