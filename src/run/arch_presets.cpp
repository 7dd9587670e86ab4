// arch_presets.cpp — the --arch table (arch_presets.hpp). Each preset is what the model's Hugging Face configuration
// and modeling code say about its block; the numbers are the released models' (rope_theta: Qwen2/Qwen3 1e6, OLMo-2
// 5e5, Llama 2 and Gemma-2 1e4, Pythia 1e4 with rotary_pct 0.25; Gemma-2's attn_logit_softcapping 50).
#include "gradflow/run/arch_presets.hpp"

#include "gradflow/core/error.hpp"

namespace gradflow {

const std::vector<ArchPreset>& arch_presets() {
  static const std::vector<ArchPreset> table = [] {
    const std::vector<std::pair<std::string, std::string>> llama = {
        {"placement", "pre"}, {"norm", "rmsnorm"}, {"ffn", "swiglu"}, {"rope", "true"}, {"bias", "off"},
        {"causal", "true"}};
    auto with = [&](std::vector<std::pair<std::string, std::string>> extra) {
      auto o = llama;
      for (auto& kv : extra) {
        bool replaced = false;
        for (auto& have : o)
          if (have.first == kv.first) {
            have.second = kv.second;
            replaced = true;
          }
        if (!replaced) o.push_back(kv);
      }
      return o;
    };
    return std::vector<ArchPreset>{
        {"classic", "nn.TransformerEncoder's block (the defaults)", {}},
        {"llama", "Llama/Mistral: Pre-RMSNorm, SwiGLU, RoPE, no biases", llama},
        {"qwen2", "Qwen2: llama with q, k, v biases, RoPE theta 1e6", with({{"qkv-bias", "true"}, {"rope-theta", "1000000"}})},
        {"qwen3", "Qwen3: llama with QK-norm per head, RoPE theta 1e6",
         with({{"qk-norm", "head"}, {"rope-theta", "1000000"}})},
        {"olmo2", "OLMo-2: norms after each branch (reorder), QK-norm over the projections, RoPE theta 5e5",
         with({{"placement", "reorder"}, {"qk-norm", "proj"}, {"rope-theta", "500000"}})},
        {"gemma2", "Gemma-2: norms before and after each branch (sandwich/Peri-LN), RMSNorm scale 1 + w, GeGLU, "
                   "logit soft-cap 50, embeddings times sqrt(d)",
         with({{"placement", "sandwich"}, {"ffn", "geglu"}, {"attn-softcap", "50"}, {"norm-offset", "true"},
               {"embed-scale", "sqrt-d"}})},
        {"neox", "GPT-NeoX/Pythia: parallel residual, LayerNorm, GELU, biases, a quarter of each head rotated",
         {{"placement", "parallel"}, {"norm", "layernorm"}, {"ffn", "mlp"}, {"activation", "gelu"}, {"rope", "true"},
          {"rotary-fraction", "0.25"}, {"causal", "true"}}},
    };
  }();
  return table;
}

const ArchPreset& find_arch(const std::string& name) {
  std::string known;
  for (const ArchPreset& a : arch_presets()) {
    if (a.name == name) return a;
    known += (known.empty() ? "" : ", ") + a.name;
  }
  throw Error("--arch '" + name + "' is not a preset; fix: use one of " + known);
}

void apply_arch(ModelSettings& s) {
  const ArchPreset& a = find_arch(s.arch);
  for (const auto& [name, value] : a.options) {
    if (s.given.count(name)) continue;  // given explicitly: it wins
    for (const ModelOption& o : model_options())
      if (o.name == name) o.set(s, value);
  }
}

}  // namespace gradflow
