// model_options.cpp — see model_options.hpp.
#include "gradflow/run/model_options.hpp"

#include "gradflow/core/error.hpp"

namespace gradflow {

namespace {

// `alias`: a second spelling ("--placements"), after the option's own name so that a spec records the own name.
void add_one(CLI::App& app, ModelSettings& s, const ModelOption& o, const std::string& alias = "") {
  const std::string name = o.name, names = "--" + name + (alias.empty() ? "" : "," + alias);
  if (o.flag) {
    app.add_flag_callback(names, [&s, name] { set_model_option(s, name, "true"); }, o.help);
    return;
  }
  CLI::Option* opt = app.add_option_function<std::string>(
      names, [&s, name](const std::string& v) { set_model_option(s, name, v); }, o.help);
  if (!o.default_text.empty()) opt->default_str(o.default_text);
}

const ModelOption& find_model_option(const std::string& name) {
  for (const ModelOption& o : model_options())
    if (o.name == name) return o;
  throw Error("internal: no model option --" + name, ErrorKind::Internal);
}

}  // namespace

void add_model_options(CLI::App& app, ModelSettings& s, bool training) {
  for (const ModelOption& o : model_options())
    if (!training || o.training) add_one(app, s, o);
}

CLI::Option* add_model_option(CLI::App& app, ModelSettings& s, const std::string& name) {
  add_one(app, s, find_model_option(name));
  return app.get_option("--" + name);
}

CLI::Option* alias_model_option(CLI::App& app, ModelSettings& s, const std::string& name, const std::string& alias) {
  const ModelOption& o = find_model_option(name);
  app.remove_option(app.get_option("--" + name));
  add_one(app, s, o, alias);
  return app.get_option("--" + name);
}

}  // namespace gradflow
