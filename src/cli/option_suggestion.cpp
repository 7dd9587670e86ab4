// option_suggestion.cpp — see option_suggestion.hpp.
#include "cli/option_suggestion.hpp"

#include "gradflow/core/nearest_names.hpp"

namespace gradflow::cli {

std::string option_suggestion(const CLI::App& app, int argc, char** argv) {
  if (argc < 2) return "";
  const CLI::App* sub = nullptr;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; }))
    if (s->get_name() == argv[1]) sub = s;
  if (!sub) return "";
  for (int i = 2; i < argc; ++i) {
    std::string word = argv[i];
    if (word == "--") break;
    if (word.rfind("--", 0) != 0 || word.size() < 3) continue;
    word = word.substr(2, word.find('=') == std::string::npos ? std::string::npos : word.find('=') - 2);
    if (sub->get_option_no_throw("--" + word)) continue;
    std::string best;
    size_t best_d = 3;
    for (const CLI::Option* opt : sub->get_options())
      for (const std::string& name : opt->get_lnames()) {
        const size_t d = edit_distance(word, name);
        if (d < best_d && 2 * d < name.size()) best_d = d, best = name;
      }
    return best.empty() ? "" : "did you mean --" + best + "?";
  }
  return "";
}

}  // namespace gradflow::cli
