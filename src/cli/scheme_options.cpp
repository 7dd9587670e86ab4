// scheme_options.cpp — see scheme_options.hpp.
#include "cli/scheme_options.hpp"

#include "gradflow/model/placement.hpp"

namespace gradflow::cli {

void add_scheme_options(CLI::App& app, SchemeFlags& f) {
  for (const auto& o : scheme_options()) {
    const std::string flag = "--" + o.name;
    CLI::Option* opt = nullptr;
    switch (o.type) {
      case SchemeOption::Type::Number:
        opt = app.add_option(flag, f.numbers[o.name], o.help);
        if (o.show_default) opt->default_str(CLI::detail::to_string(o.number_default));
        break;
      case SchemeOption::Type::Count: opt = app.add_option(flag, f.counts[o.name], o.help); break;
      case SchemeOption::Type::Word:
        opt = app.add_option(flag, f.words[o.name], o.help);
        if (o.show_default) opt->default_str(o.words.front());
        break;
    }
  }
}

SchemeValues scheme_values(const SchemeFlags& f) {
  SchemeValues v;
  for (const auto& [name, value] : f.numbers)
    if (value) v.numbers[name] = *value;
  for (const auto& [name, value] : f.counts)
    if (value) v.counts[name] = *value;
  for (const auto& [name, value] : f.words)
    if (value) v.words[name] = *value;
  return v;
}

}  // namespace gradflow::cli
