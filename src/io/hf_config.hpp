// hf_config.hpp — a Hugging Face checkpoint's config.json (private to src/io; read by checkpoint.cpp): the
// architecture it fixes (sizes, heads, activation, LayerNorm eps, under the keys the family's layout names:
// hf_layouts.hpp), checked, and the settings that would change the block's equations refused.
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "gradflow/io/checkpoint.hpp"
#include "io/hf_layouts.hpp"

namespace gradflow::io_detail {

// config.json's positive integer `key` (`path` names the file in errors); unset when there is no config (null), no
// key, or the value is null. Error when it is anything but a positive integer.
std::optional<Index> config_int(const nlohmann::json* c, const std::string& key, const std::string& path);

// What config.json `c` at `cpath` (null: none; the family's defaults) fixes of a checkpoint in layout `l`. Error
// naming the key for an activation gradflow does not have, an eps that is not positive, or a setting the block does
// not compute (cross-attention, a causal BERT, relative positions, GPT-2's unscaled or layer-scaled scores).
CheckpointArch hf_arch(const HfLayout& l, const nlohmann::json* c, const std::string& cpath);

// RoBERTa's padding_idx: config.json's pad_token_id (0 included), 1 when it does not say.
Index roberta_padding_idx(const nlohmann::json* c, const std::string& cpath);

}  // namespace gradflow::io_detail
