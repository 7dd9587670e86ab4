// config.cpp — validation of model options, with one-line errors naming the option and the fix.
#include "gradflow/model/config.hpp"

#include <cmath>
#include <cstdlib>

#include "gradflow/error.hpp"

namespace gradflow {

void ModelConfig::validate() const {
  require(layers > 0, "--layers must be positive (got " + std::to_string(layers) + "); fix: e.g. --layers 24");
  require(d_model > 0, "--d-model must be positive (got " + std::to_string(d_model) + "); fix: e.g. --d-model 64");
  require(heads > 0, "--heads must be positive (got " + std::to_string(heads) + "); fix: e.g. --heads 4");
  require(d_model % heads == 0, "--heads " + std::to_string(heads) + " does not divide --d-model " +
                                    std::to_string(d_model) + "; fix: choose heads that divide d_model (e.g. " +
                                    std::to_string(d_model % 4 == 0 ? 4 : 1) + ")");
  require(d_ff >= 0, "--d-ff must be positive (got " + std::to_string(d_ff) + "); fix: omit it for 4·d_model");
  require(std::isfinite(residual_scale), "--residual-scale must be a finite number; fix: e.g. --residual-scale 1");
  require(norm_eps > 0, "norm eps must be positive");
  require(mix_order == "post-first" || mix_order == "pre-first",
          "--mix-order '" + mix_order + "' is unknown; fix: use post-first or pre-first");
  if (mix_post_layers)
    require(*mix_post_layers >= 0 && *mix_post_layers <= layers,
            "--mix-post-layers " + std::to_string(*mix_post_layers) + " is outside 0.." + std::to_string(layers) +
                "; fix: choose K between 0 and --layers");
}

double parse_init_scale(const std::string& text, Index layers) {
  if (text == "inv-sqrt-2L") return 1.0 / std::sqrt(2.0 * static_cast<double>(layers));
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  require(end != text.c_str() && *end == '\0' && std::isfinite(v) && v > 0,
          "--init-scale '" + text + "' is not a positive number; fix: e.g. --init-scale 0.5 or --init-scale inv-sqrt-2L");
  return v;
}

}  // namespace gradflow
