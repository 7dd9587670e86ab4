// hf_layouts.cpp — the table of Hugging Face layouts and the syntax of their names (see hf_layouts.hpp). A new
// family is one entry here.
// Sources (read, not copied): transformers' models/bert/modeling_bert.py (BertSelfAttention: query/key/value
// nn.Linear, scores / sqrt(head_size); BertSelfOutput and BertOutput: LayerNorm(dense(h) + input), i.e. Post-LN;
// layer_norm_eps default 1e-12; hidden_act default "gelu" = exact erf GELU), models/roberta/modeling_roberta.py
// (the same layer), models/gpt2/modeling_gpt2.py (GPT2Block: h + attn(ln_1(h)), h + mlp(ln_2(h)), i.e. Pre-LN;
// ln_f after the last block; causal mask from the `bias` buffer; scores / sqrt(head_dim); c_attn split into
// q, k, v along its output dimension) and pytorch_utils.py (Conv1D: weight (nx, nf), y = addmm(b, x, W)).
#include "io/hf_layouts.hpp"

#include <algorithm>

namespace gradflow::io_detail {

namespace {

std::vector<TensorRule> bert_block() {
  const std::string ln1 = "attention.output.LayerNorm.", ln2 = "output.LayerNorm.";
  return {
      {"self_attn.in_proj_weight",
       {"attention.self.query.weight", "attention.self.key.weight", "attention.self.value.weight"}},
      {"self_attn.in_proj_bias", {"attention.self.query.bias", "attention.self.key.bias", "attention.self.value.bias"}},
      {"self_attn.out_proj.weight", {"attention.output.dense.weight"}},
      {"self_attn.out_proj.bias", {"attention.output.dense.bias"}},
      {"linear1.weight", {"intermediate.dense.weight"}},
      {"linear1.bias", {"intermediate.dense.bias"}},
      {"linear2.weight", {"output.dense.weight"}},
      {"linear2.bias", {"output.dense.bias"}},
      {"norm1.weight", {ln1 + "weight|" + ln1 + "gamma"}},
      {"norm1.bias", {ln1 + "bias|" + ln1 + "beta"}},
      {"norm2.weight", {ln2 + "weight|" + ln2 + "gamma"}},
      {"norm2.bias", {ln2 + "bias|" + ln2 + "beta"}},
  };
}

HfLayout bert_like(const std::string& format, const std::string& prefix, const std::string& model_type,
                   const std::string& note) {
  HfLayout l;
  l.format = format;
  l.prefixes = {"", prefix};
  l.layer_stem = "encoder.layer.";
  l.block = bert_block();
  l.placement = "post";
  l.causal = false;
  l.default_activation = "gelu";
  l.default_norm_eps = 1e-12;
  l.config = {"hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size", "hidden_act",
              "layer_norm_eps", model_type};
  // BertEmbeddings: LayerNorm(word + position + token type), positions 0, 1, ...; RoBERTa's positions start at
  // padding_idx + 1 (create_position_ids_from_input_ids)
  l.embeddings = {"embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
                  "embeddings.token_type_embeddings.weight",
                  "embeddings.LayerNorm.weight|embeddings.LayerNorm.gamma",
                  "embeddings.LayerNorm.bias|embeddings.LayerNorm.beta", model_type == "roberta", ""};
  l.note = note;
  l.architecture = model_type == "roberta" ? "RobertaModel" : "BertModel";
  return l;
}

HfLayout gpt2() {
  HfLayout l;
  l.format = "hf-gpt2";
  l.prefixes = {"", "transformer."};
  l.layer_stem = "h.";
  l.block = {
      {"self_attn.in_proj_weight", {"attn.c_attn.weight"}, true},  // (d, 3d) = [q | k | v] -> (3d, d)
      {"self_attn.in_proj_bias", {"attn.c_attn.bias"}},
      {"self_attn.out_proj.weight", {"attn.c_proj.weight"}, true},
      {"self_attn.out_proj.bias", {"attn.c_proj.bias"}},
      {"linear1.weight", {"mlp.c_fc.weight"}, true},  // (d, d_ff) -> (d_ff, d)
      {"linear1.bias", {"mlp.c_fc.bias"}},
      {"linear2.weight", {"mlp.c_proj.weight"}, true},  // (d_ff, d) -> (d, d_ff)
      {"linear2.bias", {"mlp.c_proj.bias"}},
      {"norm1.weight", {"ln_1.weight"}},
      {"norm1.bias", {"ln_1.bias"}},
      {"norm2.weight", {"ln_2.weight"}},
      {"norm2.bias", {"ln_2.bias"}},
  };
  l.final_norm = {{"norm.weight", {"ln_f.weight"}}, {"norm.bias", {"ln_f.bias"}}};
  l.ignored_in_layer = {"attn.bias", "attn.masked_bias"};  // the causal-mask buffers of older checkpoints
  l.placement = "pre";
  l.causal = true;
  l.default_activation = "gelu-tanh";  // "gelu_new"
  l.default_norm_eps = 1e-5;
  l.config = {"n_embd", "n_head", "n_layer", "n_inner", "activation_function", "layer_norm_epsilon", "gpt2"};
  l.embeddings = {"wte.weight", "wpe.weight", "", "", "", false, ""};  // GPT2Model: wte(ids) + wpe(0, 1, ...)
  l.note = "GPT-2: Pre-LN causal decoder blocks h.{i} with the final norm ln_f";
  l.architecture = "GPT2Model";
  return l;
}

}  // namespace

const std::vector<HfLayout>& hf_layouts() {
  static const std::vector<HfLayout> table = [] {
    std::vector<HfLayout> t = {
        // BERT before RoBERTa: an unprefixed RoBERTa file has BERT's names, so auto-detection by names alone calls
        // it hf-bert (the blocks are the same; only the embeddings' positions differ: give --weights-format)
        bert_like("hf-bert", "bert.", "bert", "BERT: Post-LN encoder layers bert.encoder.layer.{i}"),
        bert_like("hf-roberta", "roberta.", "roberta", "RoBERTa: Post-LN encoder layers roberta.encoder.layer.{i}"),
        gpt2(),
    };
    for (HfLayout& l : hf_decoder_layouts()) t.push_back(std::move(l));
    return t;
  }();
  return table;
}

const HfLayout* find_hf_layout(const std::string& format) {
  for (const HfLayout& l : hf_layouts())
    if (l.format == format) return &l;
  return nullptr;
}

Index layer_of(const std::string& name, const std::string& stem, std::string* rest) {
  if (name.compare(0, stem.size(), stem) != 0) return -1;
  size_t k = stem.size();
  Index i = 0;
  while (k < name.size() && name[k] >= '0' && name[k] <= '9' && k - stem.size() < 6) i = 10 * i + (name[k++] - '0');
  if (k == stem.size() || k >= name.size() || name[k] != '.') return -1;
  if (rest) *rest = name.substr(k + 1);
  return i;
}

std::vector<double> regroup_qkv(const std::vector<double>& data, int64_t rows, int64_t cols, Index heads,
                                bool from_fused) {
  const int64_t e = rows / (3 * heads);
  std::vector<double> out(data.size());
  for (int64_t j = 0; j < heads; ++j)
    for (int64_t part = 0; part < 3; ++part)  // q, k, v of head j
      for (int64_t r = 0; r < e; ++r) {
        const int64_t fused = (j * 3 + part) * e + r, ours = (part * heads + j) * e + r;
        const int64_t from = from_fused ? fused : ours, to = from_fused ? ours : fused;
        std::copy_n(data.begin() + from * cols, cols, out.begin() + to * cols);
      }
  return out;
}

std::vector<std::string> alternatives(const std::string& spec) {
  std::vector<std::string> out;
  size_t a = 0;
  for (size_t b; (b = spec.find('|', a)) != std::string::npos; a = b + 1) out.push_back(spec.substr(a, b - a));
  out.push_back(spec.substr(a));
  return out;
}

}  // namespace gradflow::io_detail
