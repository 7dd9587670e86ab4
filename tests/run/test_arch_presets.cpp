// test_arch_presets.cpp — --arch (run/arch_presets.hpp): each preset sets the block's options; an option given
// explicitly wins wherever it stands; an unknown preset or an option that contradicts the block is refused.
#include <catch2/catch.hpp>

#include <cmath>

#include "gradflow/run/arch_presets.hpp"
#include "gradflow/run/model_settings.hpp"
#include "resolved_options.hpp"

using namespace gradflow;

using gradflow::test::resolved;

TEST_CASE("arch presets: the blocks of today's models", "[run][arch]") {
  const ModelConfig llama = resolved({{"arch", "llama"}}).model;
  CHECK(llama.placement == "pre");
  CHECK(llama.norm == NormKind::RMSNorm);
  CHECK(llama.ffn == FeedForwardKind::SwiGLU);
  CHECK(llama.rope);
  CHECK(!llama.bias);
  CHECK(llama.causal);
  CHECK(llama.ffn_activation() == Activation::Silu);
  const ModelConfig qwen2 = resolved({{"arch", "qwen2"}}).model;
  CHECK((qwen2.qkv_bias && !qwen2.bias && qwen2.rope_theta == 1e6));
  const ModelConfig qwen3 = resolved({{"arch", "qwen3"}}).model;
  CHECK((qwen3.qk_norm == QkNorm::Head && !qwen3.qkv_bias));
  const ModelConfig olmo2 = resolved({{"arch", "olmo2"}}).model;
  CHECK((olmo2.placement == "reorder" && olmo2.qk_norm == QkNorm::Proj && olmo2.rope_theta == 5e5));
  const ModelConfig gemma2 = resolved({{"arch", "gemma2"}}).model;
  CHECK((gemma2.placement == "sandwich" && gemma2.ffn == FeedForwardKind::GeGLU && gemma2.attn_softcap == 50));
  CHECK((gemma2.norm_offset && gemma2.embed_scale_sqrt_d && gemma2.embedding_scale() == std::sqrt(64.0)));
  CHECK((!llama.norm_offset && llama.embedding_scale() == 1.0));
  const ModelConfig explicit_scale = resolved({{"arch", "gemma2"}, {"embed-scale", "2.5"}}).model;
  CHECK((!explicit_scale.embed_scale_sqrt_d && explicit_scale.embedding_scale() == 2.5));
  CHECK_THROWS_WITH(resolved({{"embed-scale", "-1"}}), Catch::Contains("--embed-scale"));
  const ModelConfig neox = resolved({{"arch", "neox"}}).model;
  CHECK((neox.placement == "parallel" && neox.norm == NormKind::LayerNorm && neox.bias && neox.rotary_fraction == 0.25));
  CHECK(neox.ffn_activation() == Activation::Gelu);
  const ModelConfig classic = resolved({{"arch", "classic"}}).model;
  const ModelConfig plain = resolved({}).model;
  CHECK((classic.placement == plain.placement && classic.norm == plain.norm && !classic.rope && classic.bias));
  // every preset builds a valid model
  for (const ArchPreset& a : arch_presets()) CHECK_NOTHROW(resolved({{"arch", a.name}, {"d-model", "32"}, {"heads", "2"}}));
  // neox rotates a quarter of each head: of a head of width 4 that is 1 feature, refused with the fix
  CHECK_THROWS_WITH(resolved({{"arch", "neox"}, {"d-model", "16"}, {"heads", "4"}}),
                    Catch::Contains("--rotary-fraction 0.25 of head width 4 rotates 1 features"));
}

TEST_CASE("arch presets: an option given explicitly wins, before or after --arch", "[run][arch]") {
  const ModelConfig after = resolved({{"arch", "llama"}, {"norm", "layernorm"}, {"placement", "post"}}).model;
  CHECK(after.norm == NormKind::LayerNorm);
  CHECK(after.placement == "post");
  CHECK(after.ffn == FeedForwardKind::SwiGLU);
  const ModelConfig before = resolved({{"norm", "dyt"}, {"arch", "llama"}}).model;
  CHECK(before.norm == NormKind::DyT);
  const ModelConfig no_rope_theta = resolved({{"arch", "qwen3"}, {"rope-theta", "10000"}}).model;
  CHECK(no_rope_theta.rope_theta == 10000);
  CHECK_THROWS_WITH(resolved({{"arch", "gpt5"}}), Catch::Contains("fix: use one of classic, llama"));
  // the preset's gated feed-forward and an explicit --activation contradict each other: refused, not ignored
  CHECK_THROWS_WITH(resolved({{"arch", "llama"}, {"activation", "gelu"}}),
                    Catch::Contains("does not apply to --ffn swiglu"));
}

TEST_CASE("arch presets: each family's own init and norm eps, and --init and --norm-eps win", "[run][arch]") {
  for (const ArchPreset& a : arch_presets()) {
    const RunConfig rc = resolved({{"arch", a.name}, {"d-model", "32"}, {"heads", "2"}});
    CHECK(rc.init.scheme == (a.name == "classic" ? "torch" : "hf-normal"));
  }
  CHECK(resolved({{"arch", "llama"}}).model.norm_eps == 1e-5);  // Llama 2/3 and Mistral's configs
  CHECK(resolved({{"arch", "neox"}}).model.norm_eps == 1e-5);
  for (const char* family : {"qwen2", "qwen3", "olmo2", "gemma2"})
    CHECK(resolved({{"arch", family}}).model.norm_eps == 1e-6);
  CHECK(resolved({{"arch", "llama"}, {"init", "torch"}}).init.scheme == "torch");
  CHECK(resolved({{"init", "xavier"}, {"arch", "qwen3"}}).init.scheme == "xavier");
  CHECK(resolved({{"arch", "qwen3"}, {"norm-eps", "1e-3"}}).model.norm_eps == 1e-3);
  CHECK(resolved({{"norm-eps", "2e-5"}}).model.norm_eps == 2e-5);
  CHECK_THROWS_WITH(resolved({{"norm-eps", "0"}}), Catch::Contains("--norm-eps"));
  CHECK_THROWS_WITH(resolved({{"norm-eps", "-1e-5"}}), Catch::Contains("fix"));
}
