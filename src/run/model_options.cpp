// model_options.cpp — see model_options.hpp.
#include "gradflow/run/model_options.hpp"

#include "gradflow/core/error.hpp"

namespace gradflow {

namespace {

void add_one(CLI::App& app, ModelSettings& s, const ModelOption& o) {
  const std::string name = o.name;
  if (o.flag) {
    app.add_flag_callback("--" + name, [&s, name] { set_model_option(s, name, "true"); }, o.help);
    return;
  }
  CLI::Option* opt = app.add_option_function<std::string>(
      "--" + name, [&s, name](const std::string& v) { set_model_option(s, name, v); }, o.help);
  if (!o.default_text.empty()) opt->default_str(o.default_text);
}

}  // namespace

void add_model_options(CLI::App& app, ModelSettings& s, bool training) {
  for (const ModelOption& o : model_options())
    if (!training || o.training) add_one(app, s, o);
}

CLI::Option* add_model_option(CLI::App& app, ModelSettings& s, const std::string& name) {
  for (const ModelOption& o : model_options())
    if (o.name == name) {
      add_one(app, s, o);
      return app.get_option("--" + name);
    }
  throw Error("internal: no model option --" + name, ErrorKind::Internal);
}

}  // namespace gradflow
