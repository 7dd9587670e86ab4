// hf_config.hpp — a Hugging Face checkpoint's config.json (private to src/io; read by checkpoint.cpp): the
// architecture it fixes (sizes, heads, activation, LayerNorm eps, under the keys the family's layout names:
// hf_layouts.hpp), checked, and the settings that would change the block's equations refused.
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "gradflow/io/checkpoint.hpp"
#include "io/checkpoint_errors.hpp"
#include "io/hf_layouts.hpp"

namespace gradflow::io_detail {

// config.json read field by field, each value checked for its type: every error names the file, the field, what
// it holds and what it must be ("config.json 'd/config.json': \"rope_theta\" is \"big\", not a positive number;
// fix: ..."). A field that is absent or null is unset (the family's default applies); `c` null: no config.json.
class ConfigReader {
 public:
  ConfigReader(const nlohmann::json* c, std::string path) : c_(c), path_(std::move(path)) {}
  bool present(const std::string& key) const;                   // there and not null
  std::optional<Index> positive_int(const std::string& key) const;
  std::optional<Index> non_negative_int(const std::string& key) const;
  std::optional<double> positive_number(const std::string& key) const;
  std::optional<double> fraction(const std::string& key) const;  // in (0, 1]
  std::optional<bool> boolean(const std::string& key) const;
  std::optional<std::string> string(const std::string& key) const;
  const nlohmann::json* object(const std::string& key) const;   // a JSON object, or nullptr when unset
  const nlohmann::json* list(const std::string& key) const;     // a JSON array, or nullptr when unset
  // "config.json 'path'" for messages
  std::string where() const { return "config.json " + in_quotes(path_); }
  [[noreturn]] void wrong(const std::string& key, const std::string& must_be) const;
  const nlohmann::json* json() const { return c_; }

 private:
  const nlohmann::json* c_;
  std::string path_;
};

// config.json's positive integer `key` (`path` names the file in errors); unset when there is no config (null), no
// key, or the value is null. Error when it is anything but a positive integer.
std::optional<Index> config_int(const nlohmann::json* c, const std::string& key, const std::string& path);

// What config.json `c` at `cpath` (null: none; the family's defaults) fixes of a checkpoint in layout `l`. Error
// naming the key for an activation gradflow does not have, an eps that is not positive, or a setting the block does
// not compute (cross-attention, a causal BERT, relative positions, GPT-2's unscaled or layer-scaled scores).
CheckpointArch hf_arch(const HfLayout& l, const nlohmann::json* c, const std::string& cpath);

// What a decoder family's config.json fixes (hf_decoder_config.cpp): every block option, from the keys the family's
// configuration class has and, where config.json is silent, that class's defaults. Error naming the key for a value
// of the wrong type, a setting gradflow's block does not compute (rope_scaling types, an o_proj bias without MLP
// biases, a sliding window's other settings, ...), or a missing config.json.
CheckpointArch decoder_arch(const HfLayout& l, const nlohmann::json* c, const std::string& cpath);

// RoBERTa's padding_idx: config.json's pad_token_id (0 included), 1 when it does not say.
Index roberta_padding_idx(const nlohmann::json* c, const std::string& cpath);

}  // namespace gradflow::io_detail
