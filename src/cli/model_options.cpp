// model_options.cpp — see model_options.hpp.
#include "cli/model_options.hpp"

namespace gradflow::cli {

void add_model_options(CLI::App& app, ModelSettings& s, bool training) {
  for (const ModelOption& o : model_options()) {
    if (training && !o.training) continue;
    const std::string name = o.name;
    if (o.flag) {
      app.add_flag_callback("--" + name, [&s, name] { set_model_option(s, name, "true"); }, o.help);
      continue;
    }
    CLI::Option* opt = app.add_option_function<std::string>(
        "--" + name, [&s, name](const std::string& v) { set_model_option(s, name, v); }, o.help);
    if (!o.default_text.empty()) opt->default_str(o.default_text);
  }
}

}  // namespace gradflow::cli
