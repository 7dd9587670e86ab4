// hf_layouts.hpp — the Hugging Face checkpoint layouts gradflow reads, one table entry per model family, and the
// syntax of the names the entries spell (private to src/io; read by checkpoint.cpp, checkpoint_format.cpp,
// hf_config.cpp, hf_name_map.cpp and hf_export.cpp). An entry says where a family keeps each tensor of gradflow's
// block (the name map), what config.json calls each architecture setting, and which gradflow placement its block
// is. Conventions checked against Hugging Face's modeling code (docs/formats.md, "Hugging Face checkpoints"):
// BERT/RoBERTa use nn.Linear (weight (out, in), y = x·Wᵀ + b) with q, k, v as three Linears; GPT-2 uses Conv1D
// (weight (in, out), y = x·W + b) with q, k, v packed as the columns [q | k | v] of attn.c_attn, so every GPT-2
// weight is transposed into gradflow's (out, in). The decoder families (hf_decoder_layouts.cpp) use nn.Linear with
// q, k, v as three Linears of widths h·e, K·e, K·e (grouped-query), except GPT-NeoX, whose one query_key_value
// Linear holds each head's [q | k | v] rows together (regrouped into gradflow's [all q | all k | all v]).
#pragma once
#include <string>
#include <vector>

#include "gradflow/core/types.hpp"

namespace gradflow::io_detail {

// One gradflow tensor from one or more checkpoint tensors (several: stacked along dim 0, in order).
struct TensorRule {
  std::string gradflow;              // suffix after "layers.{i}." (block) or the full name (final norm)
  std::vector<std::string> sources;  // suffixes after the block stem (block) or full names after the prefix;
                                     // "a|b" accepts either spelling (LayerNorm's old gamma/beta names)
  bool transpose = false;            // Conv1D: (in, out) stored, gradflow wants (out, in)
  bool optional = false;             // may be absent (a bias, QK-norm): config.json decides whether the model has it
  bool per_head_qkv = false;         // GPT-NeoX's fused rows [q_0 k_0 v_0 q_1 ...] (e each) -> [q_0 q_1 ... k_0 ... v_0 ...]
};

// config.json's key for each setting ("" when the family has none).
struct ConfigKeys {
  std::string d_model, heads, layers, d_ff, activation, norm_eps;
  std::string model_type;  // the config's "model_type" that selects this layout
};

// The embedding tensors that turn token ids into x_0 (names after the prefix; "" when the family has none):
// x_0[t] = word[id_t] + position[pos_t] (+ token_type[0]), then the embedding LayerNorm when there is one.
struct EmbeddingNames {
  std::string word, position, token_type, norm_weight, norm_bias;  // "a|b": either spelling
  bool roberta_positions = false;  // positions padding_idx + 1, + 2, ... (padding tokens: padding_idx)
  std::string head;                // the untied LM head, a full name without the prefix ("lm_head.weight"), or ""
};

struct HfLayout {
  std::string format;                        // --weights-format name: "hf-bert"
  std::vector<std::string> prefixes;         // the base-model prefixes a checkpoint may carry: "", "bert."
  std::string layer_stem;                    // "encoder.layer." (then "{i}.")
  std::vector<TensorRule> block;             // every tensor of one block
  std::vector<TensorRule> final_norm;        // the final norm after the stack (GPT-2's ln_f), or none
  std::vector<std::string> ignored_in_layer; // per-layer buffers that are not parameters (GPT-2's attn.bias)
  std::string placement;                     // gradflow's placement of the family's block: "post" | "pre" | ...
  bool causal = false;                       // causal self-attention (GPT-2)
  std::string default_activation;            // the family's activation when config.json does not say
  double default_norm_eps = 1e-5;            // the family's LayerNorm eps when config.json does not say
  ConfigKeys config;
  EmbeddingNames embeddings;
  std::string note;                          // one line for docs and errors: what the family is
  bool decoder = false;                      // a decoder family: config.json required, read by decoder_arch
  std::string architecture;                  // config.json's "architectures" entry an export writes
};

// Every layout, in the order auto-detection by tensor names tries them.
const std::vector<HfLayout>& hf_layouts();
// The decoder families' layouts (hf_decoder_layouts.cpp), appended to hf_layouts().
std::vector<HfLayout> hf_decoder_layouts();
// The layout of `format`, or nullptr.
const HfLayout* find_hf_layout(const std::string& format);

// The names the entries spell: i for "<stem>{i}.rest" (decimal, at most 6 digits), and `rest`; -1 for any other name.
Index layer_of(const std::string& name, const std::string& stem, std::string* rest);
// GPT-NeoX's fused q|k|v rows (e each, `cols` wide) between its per-head order [q_0 k_0 v_0 q_1 ...] and gradflow's
// [q_0 q_1 ... | k_0 ... | v_0 ...]: to gradflow's when `from_fused`, back to the fused order otherwise (export).
// The caller has checked that the rows are 3·heads·e.
std::vector<double> regroup_qkv(const std::vector<double>& data, int64_t rows, int64_t cols, Index heads,
                                bool from_fused);
// The spellings of a source "a|b": {"a", "b"} ({"a"} for a plain name).
std::vector<std::string> alternatives(const std::string& spec);

}  // namespace gradflow::io_detail
