// hf_decoder_export.hpp — the config.json `gradflow export --format hf-llama|...|hf-neox` writes, and the check that
// it describes the model (private to src/io; read by hf_export.cpp).
#pragma once
#include <nlohmann/json.hpp>

#include "gradflow/model/config.hpp"
#include "io/hf_layouts.hpp"

namespace gradflow::io_detail {

// The family's config.json for the model `cfg`: sizes, heads, grouped-query heads, head width, RoPE, norm eps,
// activation, biases, the soft-cap and logit scale (Gemma-2), the residual form (GPT-NeoX), no sliding window.
nlohmann::ordered_json decoder_config_json(const HfLayout& l, const ModelConfig& cfg);

// Reads `c` back the way --weights does (decoder_arch, apply_decoder_arch) and compares the block it fixes with
// cfg's: Error naming every option that differs (the model is not the family's block) and the final norm.
void check_decoder_fits(const HfLayout& l, const ModelConfig& cfg, const nlohmann::ordered_json& c, bool final_norm);

}  // namespace gradflow::io_detail
