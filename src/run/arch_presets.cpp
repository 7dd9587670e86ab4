// arch_presets.cpp — the --arch table (arch_presets.hpp). Each preset is what the model's Hugging Face configuration
// and modeling code say about its block; the numbers are the released models' (rope_theta: Qwen2/Qwen3 1e6, OLMo-2
// 5e5, Llama 2 and Gemma-2 1e4, Pythia 1e4 with rotary_pct 0.25; Gemma-2's attn_logit_softcapping 50). Every decoder
// preset initializes as its Hugging Face class does (`_init_weights`: N(0, initializer_range = 0.02) for every linear
// and embedding weight, zero biases, norm weights 1 or Gemma's stored 0): --init hf-normal, unless --init is given;
// and with its released configs' norm eps (rms_norm_eps 1e-6 for Qwen2, Qwen3, OLMo-2 and Gemma-2; 1e-5, the
// default, for Llama 2/3 and Mistral, and Pythia's layer_norm_eps).
#include "gradflow/run/arch_presets.hpp"

#include "gradflow/core/error.hpp"

namespace gradflow {

const std::vector<ArchPreset>& arch_presets() {
  static const std::vector<ArchPreset> table = [] {
    const std::vector<std::pair<std::string, std::string>> llama = {
        {"placement", "pre"}, {"norm", "rmsnorm"}, {"ffn", "swiglu"}, {"rope", "true"}, {"bias", "off"},
        {"causal", "true"}, {"init", "hf-normal"}};
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
        {"qwen2", "Qwen2: llama with q, k, v biases, RoPE theta 1e6", with({{"qkv-bias", "true"}, {"rope-theta", "1000000"}, {"norm-eps", "1e-6"}})},
        {"qwen3", "Qwen3: llama with QK-norm per head, RoPE theta 1e6",
         with({{"qk-norm", "head"}, {"rope-theta", "1000000"}, {"norm-eps", "1e-6"}})},
        {"olmo2", "OLMo-2: norms after each branch (reorder), QK-norm over the projections, RoPE theta 5e5",
         with({{"placement", "reorder"}, {"qk-norm", "proj"}, {"rope-theta", "500000"}, {"norm-eps", "1e-6"}})},
        {"gemma2", "Gemma-2: norms before and after each branch (sandwich/Peri-LN), RMSNorm scale 1 + w, GeGLU, "
                   "logit soft-cap 50, embeddings times sqrt(d)",
         with({{"placement", "sandwich"}, {"ffn", "geglu"}, {"attn-softcap", "50"}, {"norm-offset", "true"},
               {"embed-scale", "sqrt-d"}, {"norm-eps", "1e-6"}})},
        {"neox", "GPT-NeoX/Pythia: parallel residual, LayerNorm, GELU, biases, a quarter of each head rotated",
         {{"placement", "parallel"}, {"norm", "layernorm"}, {"ffn", "mlp"}, {"activation", "gelu"}, {"rope", "true"},
          {"rotary-fraction", "0.25"}, {"causal", "true"}, {"init", "hf-normal"}}},
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
