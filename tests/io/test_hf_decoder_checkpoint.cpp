// test_hf_decoder_checkpoint.cpp — --weights for the decoder families (src/io/hf_decoder_layouts.cpp,
// hf_decoder_config.cpp, hf_decoder_export.cpp): the name maps (q, k, v of grouped-query widths stacked in order,
// GPT-NeoX's per-head rows regrouped, the buffers real files carry ignored), config.json read through the typed
// reader into every block option (each family's defaults where it is silent), the settings gradflow's block does not
// compute refused by name, the sliding window, and `export --format hf-*` read back to the same tensors. The numbers
// against the families' equations: tests/pytorch/test_hf_decoder_checkpoints.py.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>

#include "gradflow/io/checkpoint.hpp"
#include "gradflow/model/model.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/run/run_inputs.hpp"
#include "checkpoint_fixtures.hpp"
#include "temp_dir.hpp"

using namespace gradflow;
using Catch::Matchers::Contains;
using test::error_of;
using test::TempDir;
using test::counting;
using test::named;

namespace {

// Llama-layout tensors: d = 8, h = 4 heads of e = 2, K = 2 key/value heads, d_ff = 6; `extra` per layer.
std::vector<SafeTensor> llama_tensors(int layers, const std::vector<std::string>& norms = {"input_layernorm",
                                                                                           "post_attention_layernorm"}) {
  std::vector<SafeTensor> t = {counting("model.embed_tokens.weight", {11, 8}, 0.25),
                               counting("model.norm.weight", {8}, 1), counting("lm_head.weight", {11, 8}, 0.5)};
  for (int i = 0; i < layers; ++i) {
    const std::string s = "model.layers." + std::to_string(i) + ".";
    const double b = 1000.0 * (i + 1);
    t.push_back(counting(s + "self_attn.q_proj.weight", {8, 8}, b + 100));
    t.push_back(counting(s + "self_attn.k_proj.weight", {4, 8}, b + 200));
    t.push_back(counting(s + "self_attn.v_proj.weight", {4, 8}, b + 300));
    t.push_back(counting(s + "self_attn.o_proj.weight", {8, 8}, b + 400));
    t.push_back(counting(s + "mlp.gate_proj.weight", {6, 8}, b + 500));
    t.push_back(counting(s + "mlp.up_proj.weight", {6, 8}, b + 600));
    t.push_back(counting(s + "mlp.down_proj.weight", {8, 6}, b + 700));
    for (size_t k = 0; k < norms.size(); ++k) t.push_back(counting(s + norms[k] + ".weight", {8}, b + 10 * (k + 1)));
    t.push_back(counting(s + "self_attn.rotary_emb.inv_freq", {1}, 1));
  }
  return t;
}

std::string llama_config(const std::string& type, int layers, const std::string& extra = "") {
  return R"({"model_type": ")" + type + R"(", "hidden_size": 8, "num_attention_heads": 4, "num_key_value_heads": 2,
             "num_hidden_layers": )" + std::to_string(layers) + R"(, "intermediate_size": 6, "rms_norm_eps": 1e-5,
             "rope_theta": 500000.0, "hidden_act": "silu")" + extra + "}";
}

void write_llama(const TempDir& dir, const std::string& type, const std::string& extra = "",
                 std::vector<SafeTensor> t = llama_tensors(2)) {
  write_safetensors(dir.file("model.safetensors"), t);
  test::write_bytes(dir.file("config.json"), llama_config(type, 2, extra));
}

// A safetensors file of one U8 (1, 1, 4, 4) causal mask and one 0-d F32 masked_bias (GPT-NeoX's buffers).
std::string neox_buffers_file(int layers) {
  std::string header = "{", data;
  for (int i = 0; i < layers; ++i) {
    const std::string s = "gpt_neox.layers." + std::to_string(i) + ".attention.";
    const size_t at = data.size();
    header += std::string(i ? "," : "") + "\"" + s + "bias\":{\"dtype\":\"U8\",\"shape\":[1,1,4,4],\"data_offsets\":[" +
              std::to_string(at) + "," + std::to_string(at + 16) + "]},\"" + s +
              "masked_bias\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[" + std::to_string(at + 16) + "," +
              std::to_string(at + 20) + "]}";
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c) data += static_cast<char>(c <= r);
    const float fill = -1e9f;
    data.append(reinterpret_cast<const char*>(&fill), 4);
  }
  header += "}";
  return test::le_bytes(header.size(), 8) + header + data;
}

}  // namespace

TEST_CASE("hf-llama: q, k, v of grouped-query widths stacked in order / optional tensors absent / config fixes the block",
          "[io][checkpoint][decoder]") {
  TempDir dir;
  write_llama(dir, "llama");
  const Checkpoint c = read_checkpoint(dir.path());
  CHECK(c.format == "hf-llama");
  const SafeTensor& in = named(c, "layers.1.self_attn.in_proj_weight");
  REQUIRE(in.shape == std::vector<int64_t>{16, 8});  // (h + 2K)·e = (4 + 4)·2 rows
  CHECK(in.data[0] == 2100.0);                       // q row 0
  CHECK(in.data[8 * 8] == 2200.0);                   // k row 0 after the 8 q rows
  CHECK(in.data[12 * 8 + 3] == 2303.0);              // v row 0 after the 4 k rows
  CHECK(named(c, "layers.0.linear1.weight").data[0] == 1500.0);  // gate
  CHECK(named(c, "layers.0.linear3.weight").data[0] == 1600.0);  // up
  CHECK(named(c, "layers.0.linear2.weight").data[0] == 1700.0);  // down
  CHECK(named(c, "layers.0.norm2.weight").data[0] == 1020.0);    // post_attention_layernorm
  CHECK(c.source_names.at("layers.0.self_attn.in_proj_weight") ==
        "model.layers.0.self_attn.q_proj.weight + model.layers.0.self_attn.k_proj.weight + "
        "model.layers.0.self_attn.v_proj.weight");
  for (const SafeTensor& t : c.tensors) CHECK(t.name.find("bias") == std::string::npos);  // none in the file
  ModelConfig cfg;
  apply_checkpoint(c, GivenSizes{}, GivenArch{}, cfg);
  CHECK(cfg.placement == "pre");
  CHECK(cfg.causal);
  CHECK(cfg.heads == 4);
  CHECK(cfg.kv() == 2);
  CHECK(cfg.hd() == 2);
  CHECK(cfg.rope);
  CHECK(cfg.rope_theta == 500000.0);
  CHECK(cfg.rotary_fraction == 1.0);
  CHECK(cfg.norm == NormKind::RMSNorm);
  CHECK(cfg.norm_eps == 1e-5);
  CHECK(cfg.ffn == FeedForwardKind::SwiGLU);
  CHECK_FALSE(cfg.bias);
  CHECK_FALSE(cfg.in_proj_bias());
  CHECK(cfg.qk_norm == QkNorm::None);
  CHECK(cfg.final_norm == std::optional<bool>(true));
  // the model built from the config takes exactly the checkpoint's tensors (the buffer and embeddings outside)
  Model m(cfg);
  load_checkpoint_params(c, m.params());
  CHECK(m.params().at("layers.1.self_attn.in_proj_weight")(8, 0) == 2200.0);
}

TEST_CASE("hf-neox: the fused rows regrouped per head / U8 and 0-d buffers ignored / parallel or sequential residual",
          "[io][checkpoint][decoder]") {
  TempDir dir;
  // d = 8, h = 2 heads of e = 4: row j·12 + part·4 + r of query_key_value is head j's q, k or v row r
  std::vector<SafeTensor> t = {counting("gpt_neox.embed_in.weight", {9, 8}, 0), counting("embed_out.weight", {9, 8}, 0),
                               counting("gpt_neox.final_layer_norm.weight", {8}, 1),
                               counting("gpt_neox.final_layer_norm.bias", {8}, 2)};
  for (int i = 0; i < 2; ++i) {
    const std::string s = "gpt_neox.layers." + std::to_string(i) + ".";
    const double b = 1000.0 * (i + 1);
    for (const char* ln : {"input_layernorm", "post_attention_layernorm"}) {
      t.push_back(counting(s + ln + ".weight", {8}, b + 1));
      t.push_back(counting(s + ln + ".bias", {8}, b + 2));
    }
    t.push_back(counting(s + "attention.query_key_value.weight", {24, 8}, b + 100));
    t.push_back(counting(s + "attention.query_key_value.bias", {24}, b + 10));
    t.push_back(counting(s + "attention.dense.weight", {8, 8}, b + 300));
    t.push_back(counting(s + "attention.dense.bias", {8}, b + 20));
    t.push_back(counting(s + "attention.rotary_emb.inv_freq", {1}, 1));
    t.push_back(counting(s + "mlp.dense_h_to_4h.weight", {32, 8}, b + 400));
    t.push_back(counting(s + "mlp.dense_h_to_4h.bias", {32}, b + 30));
    t.push_back(counting(s + "mlp.dense_4h_to_h.weight", {8, 32}, b + 500));
    t.push_back(counting(s + "mlp.dense_4h_to_h.bias", {8}, b + 40));
  }
  write_safetensors(dir.file("model-00001-of-00002.safetensors"), t);
  test::write_bytes(dir.file("model-00002-of-00002.safetensors"), neox_buffers_file(2));
  std::string index = R"({"metadata": {}, "weight_map": {)";
  for (size_t k = 0; k < t.size(); ++k)
    index += (k ? "," : "") + std::string("\"") + t[k].name + "\": \"model-00001-of-00002.safetensors\"";
  for (int i = 0; i < 2; ++i)
    for (const char* b : {"bias", "masked_bias"})
      index += ",\"gpt_neox.layers." + std::to_string(i) + ".attention." + b + "\": \"model-00002-of-00002.safetensors\"";
  test::write_bytes(dir.file("model.safetensors.index.json"), index + "}}");
  const std::string config = R"({"model_type": "gpt_neox", "hidden_size": 8, "num_attention_heads": 2,
      "num_hidden_layers": 2, "intermediate_size": 32, "rotary_pct": 0.5, "rotary_emb_base": 10000,
      "hidden_act": "gelu", "layer_norm_eps": 1e-5)";
  test::write_bytes(dir.file("config.json"), config + "}");
  const Checkpoint c = read_checkpoint(dir.path());
  CHECK(c.format == "hf-neox");
  const SafeTensor& in = named(c, "layers.0.self_attn.in_proj_weight");
  REQUIRE(in.shape == std::vector<int64_t>{24, 8});
  // gradflow row (part·h + j)·e + r  <-  fused row (j·3 + part)·e + r; column 0
  for (int part = 0; part < 3; ++part)
    for (int j = 0; j < 2; ++j)
      for (int r = 0; r < 4; ++r)
        CHECK(in.data[static_cast<size_t>(((part * 2 + j) * 4 + r) * 8)] == 1100.0 + ((j * 3 + part) * 4 + r) * 8);
  const SafeTensor& bias = named(c, "layers.1.self_attn.in_proj_bias");
  CHECK(bias.data[4] == 2010.0 + 12);  // gradflow's q row of head 1 = the fused row 12
  CHECK(c.source_names.at("layers.0.self_attn.in_proj_weight") ==
        "gpt_neox.layers.0.attention.query_key_value.weight (per head [q|k|v], regrouped)");
  ModelConfig cfg;
  apply_checkpoint(c, GivenSizes{}, GivenArch{}, cfg);
  CHECK(cfg.placement == "parallel");
  CHECK(cfg.norm == NormKind::LayerNorm);
  CHECK(cfg.bias);
  CHECK(cfg.activation == Activation::Gelu);
  CHECK(cfg.ffn == FeedForwardKind::Mlp);
  CHECK(cfg.rotary_fraction == 0.5);
  Model m(cfg);
  load_checkpoint_params(c, m.params());
  // use_parallel_residual false: the sequential Pre-LN block; both spellings of a setting must agree
  test::write_bytes(dir.file("config.json"), config + R"(, "use_parallel_residual": false})");
  ModelConfig seq;
  apply_checkpoint(read_checkpoint(dir.path()), GivenSizes{}, GivenArch{}, seq);
  CHECK(seq.placement == "pre");
  test::write_bytes(dir.file("config.json"), config + R"(, "partial_rotary_factor": 0.25})");
  CHECK_THAT(error_of([&] { read_checkpoint(dir.path()); }),
             Contains("\"partial_rotary_factor\" and \"rotary_pct\" both say the same setting, with different values"));
  // reading the mask as a parameter is refused by its dtype
  CHECK_THAT(error_of([&] { read_safetensors(dir.file("model-00002-of-00002.safetensors")); }),
             Contains("dtype 'U8' is not supported"));
}

TEST_CASE("decoder configs: each family's defaults where config.json is silent", "[io][checkpoint][decoder]") {
  TempDir dir;
  SECTION("qwen2: q, k, v biases without a key; a checkpoint without them fails to load") {
    write_llama(dir, "qwen2");
    const Checkpoint c = read_checkpoint(dir.path());
    ModelConfig cfg;
    apply_checkpoint(c, GivenSizes{}, GivenArch{}, cfg);
    CHECK(cfg.qkv_bias);
    CHECK_FALSE(cfg.bias);
    Model m(cfg);
    CHECK_THAT(error_of([&] { load_checkpoint_params(c, m.params()); }),
               Contains("the model its config.json gives has gradflow's 'layers.0.self_attn.in_proj_bias' of shape "
                        "[16], which none of the checkpoint's tensors holds; fix: check config.json's model_type"));
    auto t = llama_tensors(2);
    for (int i = 0; i < 2; ++i)
      for (const auto& [p, rows] : std::vector<std::pair<std::string, int64_t>>{{"q", 8}, {"k", 4}, {"v", 4}})
        t.push_back(counting("model.layers." + std::to_string(i) + ".self_attn." + p + "_proj.bias", {rows}, 7));
    write_llama(dir, "qwen2", "", t);
    Model m2(cfg);
    load_checkpoint_params(read_checkpoint(dir.path()), m2.params());
  }
  SECTION("qwen3: per-head QK-norm, head_dim 128 unless given") {
    auto t = llama_tensors(2);
    for (int i = 0; i < 2; ++i)
      for (const char* n : {"q_norm", "k_norm"})
        t.push_back(counting("model.layers." + std::to_string(i) + ".self_attn." + n + ".weight", {2}, 3));
    write_llama(dir, "qwen3", R"(, "head_dim": 2)", t);
    ModelConfig cfg;
    apply_checkpoint(read_checkpoint(dir.path()), GivenSizes{}, GivenArch{}, cfg);
    CHECK(cfg.qk_norm == QkNorm::Head);
    CHECK(cfg.hd() == 2);
    write_llama(dir, "qwen3", "", t);
    CHECK(read_checkpoint(dir.path()).arch.head_dim == 128);
  }
  SECTION("olmo2: norms after the branches, QK-norm over the projections") {
    write_llama(dir, "olmo2", "", llama_tensors(2, {"post_attention_layernorm", "post_feedforward_layernorm"}));
    const Checkpoint c = read_checkpoint(dir.path());
    CHECK(named(c, "layers.0.norm1.weight").data[0] == 1010.0);  // post_attention_layernorm
    ModelConfig cfg;
    apply_checkpoint(c, GivenSizes{}, GivenArch{}, cfg);
    CHECK(cfg.placement == "reorder");
    CHECK(cfg.qk_norm == QkNorm::Proj);
  }
  SECTION("gemma2: offset norms, soft-caps 50 and 30, scale 256, tied head, a 4096 window on alternate layers") {
    write_llama(dir, "gemma2", R"(, "hidden_activation": "gelu_pytorch_tanh")",
                llama_tensors(2, {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                                  "post_feedforward_layernorm"}));
    test::write_bytes(dir.file("config.json"),
                      R"({"model_type": "gemma2", "hidden_size": 8, "num_attention_heads": 4, "num_key_value_heads": 2,
                          "num_hidden_layers": 2, "intermediate_size": 6, "head_dim": 2})");
    const Checkpoint c = read_checkpoint(dir.path());
    CHECK(named(c, "layers.0.norm3.weight").data[0] == 1020.0);  // post_attention_layernorm
    CHECK(named(c, "layers.0.norm2.weight").data[0] == 1030.0);  // pre_feedforward_layernorm
    const CheckpointArch& a = c.arch;
    CHECK(a.attn_softcap == 50.0);
    CHECK(a.final_softcap == 30.0);
    CHECK(a.attn_scale == 256.0);
    CHECK(a.tied_head);
    CHECK(a.sliding_window == 4096);
    CHECK(a.norm_eps == std::optional<double>(1e-6));
    ModelConfig cfg;
    apply_checkpoint(c, GivenSizes{}, GivenArch{}, cfg);
    CHECK(cfg.placement == "sandwich");
    CHECK(cfg.norm_offset);
    CHECK(cfg.embed_scale_sqrt_d);
    CHECK(cfg.ffn == FeedForwardKind::GeGLU);
    check_sliding_window(c, 4096);
    CHECK_THAT(error_of([&] { check_sliding_window(c, 4097); }),
               Contains("the 4097 tokens are more than the sliding window of 4096 tokens of layers 0, 2, 4, ... "
                        "(Gemma-2's alternate layers)"));
    test::write_bytes(dir.file("config.json"),
                      R"({"model_type": "gemma2", "hidden_size": 8, "num_attention_heads": 4, "num_hidden_layers": 2,
                          "intermediate_size": 6, "head_dim": 2, "attn_logit_softcapping": null,
                          "final_logit_softcapping": null, "sliding_window": null})");
    const Checkpoint none = read_checkpoint(dir.path());
    CHECK(none.arch.attn_softcap == 0.0);
    CHECK(none.arch.final_softcap == 0.0);
    CHECK(none.arch.sliding_window == 0);
  }
}

TEST_CASE("decoder configs: RoPE from rope_scaling and Transformers 5's rope_parameters, by the same rules",
          "[io][checkpoint][decoder]") {
  TempDir dir;
  const auto refused = [&](const std::string& extra) {
    write_llama(dir, "llama", extra);
    return error_of([&] { read_checkpoint(dir.path()); });
  };
  const std::string where = "config.json '" + dir.file("config.json") + "': ";
  // both keys, read differently by Transformers 4 ("type" first) and 5 ("rope_type")
  CHECK_THAT(refused(R"(, "rope_scaling": {"rope_type": "linear", "type": "default", "factor": 4})"),
             Contains(where + "\"rope_scaling\" gives \"rope_type\" 'linear' and \"type\" 'default'"));
  CHECK(refused(R"(, "rope_scaling": {"rope_type": "default", "type": "default"})").empty());
  CHECK_THAT(refused(R"(, "rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0})"),
             Contains(where + "\"rope_parameters\" has type 'llama3'"));
  CHECK_THAT(refused(R"(, "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0})"),
             Contains("\"rope_theta\" and \"rope_parameters\".rope_theta both say the same setting"));
  CHECK_THAT(refused(R"(, "rope_parameters": {"rope_type": "default", "rope_theta": -1})"),
             Contains("\"rope_parameters\".rope_theta is -1, not a positive number"));
  CHECK_THAT(refused(R"(, "rope_parameters": {"full_attention": {"rope_type": "default"}})"),
             Contains("\"rope_parameters\" gives a RoPE per layer type ('full_attention')"));
  CHECK(refused(R"(, "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0})").empty());
  // a Transformers 5 config: theta and the rotated fraction only inside rope_parameters
  write_safetensors(dir.file("model.safetensors"), llama_tensors(2));
  test::write_bytes(dir.file("config.json"), R"({"model_type": "llama", "hidden_size": 8, "num_attention_heads": 4,
      "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 6, "rms_norm_eps": 1e-5,
      "hidden_act": "silu", "rope_parameters": {"rope_type": "default", "rope_theta": 250000.0}})");
  const Checkpoint c = read_checkpoint(dir.path());
  CHECK(c.arch.rope_theta == 250000.0);
  CHECK_THAT(refused(R"(, "partial_rotary_factor": 0.5, "rope_parameters": {"rope_type": "default",
                        "partial_rotary_factor": 0.25})"),
             Contains("\"partial_rotary_factor\" and \"rope_parameters\".partial_rotary_factor both say"));
}

TEST_CASE("checkpoint folders: a link loop or a link to nothing is named as such, never taken for a missing file",
          "[io][checkpoint]") {
  namespace fs = std::filesystem;
  TempDir dir;
  write_llama(dir, "llama");
  fs::remove(dir.file("config.json"));
  fs::create_symlink("config.json", dir.file("config.json"));  // a loop: the config would be read as absent
  CHECK_THAT(error_of([&] { read_checkpoint(dir.path()); }),
             Contains("'" + dir.file("config.json") + "': is a symbolic link loop; fix: point the link at the file"));
  fs::remove(dir.file("config.json"));
  fs::create_symlink("elsewhere.json", dir.file("config.json"));
  CHECK_THAT(error_of([&] { read_checkpoint(dir.path()); }), Contains("is a symbolic link to nothing"));
  fs::remove(dir.file("config.json"));
  test::write_bytes(dir.file("config.json"), llama_config("llama", 2));
  fs::rename(dir.file("model.safetensors"), dir.file("real.safetensors"));
  fs::create_symlink("model.safetensors", dir.file("model.safetensors"));
  CHECK_THAT(error_of([&] { read_checkpoint(dir.path()); }),
             Contains("model.safetensors': is a symbolic link loop"));
  fs::remove(dir.file("model.safetensors"));
  fs::create_symlink("real.safetensors", dir.file("model.safetensors"));  // a good link reads as the file
  CHECK(error_of([&] { read_checkpoint(dir.path()); }).empty());
}

TEST_CASE("decoder checkpoints: a tensor the config does not give is refused naming the file's tensor, and "
          "a config that disagrees with the tensors is blamed on config.json", "[io][checkpoint][decoder]") {
  TempDir dir;
  const auto load = [&](const std::vector<SafeTensor>& t, const std::string& extra = "") {
    write_llama(dir, "llama", extra, t);
    return error_of([&] {
      const Checkpoint c = read_checkpoint(dir.path());
      ModelConfig cfg;
      apply_checkpoint(c, GivenSizes{}, GivenArch{}, cfg);
      Model m(cfg);
      load_checkpoint_params(c, m.params());
    });
  };
  REQUIRE(load(llama_tensors(2)).empty());
  // q_norm on a Llama (no QK-norm in its config): an error naming the file's tensor, not a warning
  std::vector<SafeTensor> t = llama_tensors(2);
  t.push_back(counting("model.layers.0.self_attn.q_norm.weight", {2}, 1));
  CHECK_THAT(load(t), Contains("tensor 'model.layers.0.self_attn.q_norm.weight") && Contains("has no place in the model "
                                                                                              "config.json"));
  // every q, k, v bias with attention_bias false
  t = llama_tensors(2);
  for (const char* w : {"q", "k", "v"})
    t.push_back(counting(std::string("model.layers.1.self_attn.") + w + "_proj.bias", {std::string(w) == "q" ? 8 : 4}, 1));
  CHECK_THAT(load(t, R"(, "attention_bias": false)"), Contains("has no place in the model config.json"));
  // a lone q_proj.bias is named as such, not as "k_proj.bias is missing"
  t = llama_tensors(2);
  t.push_back(counting("model.layers.0.self_attn.q_proj.bias", {8}, 1));
  const std::string lone = load(t);
  CHECK_THAT(lone, Contains("tensor 'model.layers.0.self_attn.q_proj.bias' is there without"));
  CHECK_THAT(lone, !Contains("is missing"));
  // num_key_value_heads that disagrees with the tensors: blamed on the config.json, not on --kv-heads (not given)
  const std::string kv = load(llama_tensors(2), R"(, "num_key_value_heads": 4)");
  CHECK_THAT(kv, Contains("config.json"));
  CHECK_THAT(kv, !Contains("check --heads"));
}

TEST_CASE("decoder configs: a wrong value or a setting the block does not compute is refused by its key",
          "[io][checkpoint][decoder]") {
  TempDir dir;
  const auto refused = [&](const std::string& type, const std::string& extra) {
    write_llama(dir, type, extra);
    return error_of([&] { read_checkpoint(dir.path()); });
  };
  const std::string where = "config.json '" + dir.file("config.json") + "': ";
  CHECK_THAT(refused("llama", R"(, "rope_scaling": {"rope_type": "llama3", "factor": 8.0})"),
             Contains(where + "\"rope_scaling\" has type 'llama3'"));
  CHECK(refused("llama", R"(, "rope_scaling": {"rope_type": "default"})").empty());
  CHECK_THAT(refused("llama", R"(, "rope_scaling": 5)"), Contains("\"rope_scaling\" is 5, not an object"));
  CHECK_THAT(refused("mistral", R"(, "rope_theta": "big")"),
             Contains(where + "\"rope_theta\" is \"big\", not a positive number; fix: restore the config.json"));
  CHECK_THAT(refused("llama", R"(, "attention_bias": true)"),
             Contains("\"attention_bias\" is true and \"mlp_bias\" is not (biases on some linear layers only), which "
                      "gradflow's block does not compute"));
  CHECK_THAT(refused("llama", R"(, "attention_bias": "yes")"), Contains("\"attention_bias\" is \"yes\", not true or false"));
  CHECK_THAT(refused("llama", R"(, "hidden_act": "gelu")"),
             Contains("\"hidden_act\" is 'gelu', which gradflow's hf-llama block does not have (it has silu: SwiGLU)"));
  CHECK_THAT(refused("qwen2", R"(, "num_key_value_heads": 3)"),
             Contains("\"num_key_value_heads\" = 3 does not divide \"num_attention_heads\" = 4"));
  CHECK_THAT(refused("llama", R"(, "head_dim": 0)"), Contains("\"head_dim\" is 0, not a positive integer"));
  CHECK_THAT(refused("llama", R"(, "partial_rotary_factor": 0.3)"),
             Contains("rotates 0 features, not an even number >= 2"));
  CHECK_THAT(refused("llama", R"(, "clip_qkv": 8)"), Contains("\"clip_qkv\" is set"));
  // no config.json: the decoder families need it (the names alone do not say which family, or its heads)
  write_safetensors(dir.file("model.safetensors"), llama_tensors(1));
  std::filesystem::remove(dir.file("config.json"));
  CHECK_THAT(error_of([&] { read_checkpoint(dir.path(), "hf-qwen3"); }),
             Contains("--weights-format hf-qwen3: needs the checkpoint's config.json"));
}

TEST_CASE("decoder checkpoints: options the config fixes are refused / --loss lm reads the untied head",
          "[io][checkpoint][decoder]") {
  TempDir dir;
  write_llama(dir, "llama");
  const Checkpoint c = read_checkpoint(dir.path());
  ModelConfig cfg;
  GivenArch given;
  given.block_options = {"rope-theta"};
  CHECK_THAT(error_of([&] { apply_checkpoint(c, GivenSizes{}, given, cfg); }),
             Contains("--rope-theta contradicts the hf-llama checkpoint '" + dir.path() +
                      "' (its config.json fixes the block); fix: drop --rope-theta"));
  GivenArch norm;
  norm.norm = NormKind::LayerNorm;
  CHECK_THAT(error_of([&] { apply_checkpoint(c, GivenSizes{}, norm, cfg); }), Contains("--norm contradicts"));
  GivenArch act;
  act.activation = Activation::Silu;
  CHECK_THAT(error_of([&] { apply_checkpoint(c, GivenSizes{}, act, cfg); }), Contains("a gated feed-forward"));

  const Checkpoint head = read_checkpoint(dir.path(), "auto", true, {}, true);
  std::vector<std::string> roles;
  for (const SafeTensor& t : head.embeddings) roles.push_back(t.name);
  std::sort(roles.begin(), roles.end());
  CHECK(roles == std::vector<std::string>{"head", "word"});
  CHECK(token_positions(head, {10, 0, 3}) == std::vector<Index>{0, 1, 2});  // RoPE: no table to run out of
  CHECK(embed_tokens(head, {1})(0, 2) == 0.25 + 8 + 2);                      // embed_tokens row 1, column 2
  auto t = llama_tensors(2);
  t.erase(t.begin() + 2);  // no lm_head.weight
  write_llama(dir, "llama", "", t);
  CHECK_THAT(error_of([&] { read_checkpoint(dir.path(), "auto", true, {}, true); }),
             Contains("--loss lm needs the LM head 'lm_head.weight' (config.json's tie_word_embeddings is false)"));
  write_llama(dir, "llama", R"(, "tie_word_embeddings": true)", t);
  CHECK(read_checkpoint(dir.path(), "auto", true, {}, true).embeddings.size() == 1);  // the embedding is the head
}

TEST_CASE("export --format hf-*: the decoder families' folders read back to the same tensors / a model that is not the "
          "family's block refused", "[io][checkpoint][decoder]") {
  struct Case {
    std::string format;
    ModelConfig cfg;
  };
  ModelConfig llama;
  llama.layers = 2;
  llama.d_model = 8;
  llama.heads = 4;
  llama.kv_heads = 2;
  llama.d_ff = 6;
  llama.placement = "pre";
  llama.causal = true;
  llama.rope = true;
  llama.norm = NormKind::RMSNorm;
  llama.ffn = FeedForwardKind::SwiGLU;
  llama.bias = false;
  ModelConfig qwen2 = llama, qwen3 = llama, olmo2 = llama, gemma2 = llama, neox = llama;
  qwen2.qkv_bias = true;
  qwen3.qk_norm = QkNorm::Head;
  qwen3.head_dim = 4;
  olmo2.placement = "reorder";
  olmo2.qk_norm = QkNorm::Proj;
  gemma2.placement = "sandwich";
  gemma2.ffn = FeedForwardKind::GeGLU;
  gemma2.norm_offset = true;
  gemma2.attn_softcap = 50;
  gemma2.attn_scale = 3;
  neox.placement = "parallel";
  neox.norm = NormKind::LayerNorm;
  neox.ffn = FeedForwardKind::Mlp;
  neox.activation = Activation::Gelu;
  neox.bias = true;
  neox.kv_heads = 0;
  neox.heads = 2;  // e = 4: a rotated half of 2 features
  neox.rotary_fraction = 0.5;
  for (const Case& k : std::vector<Case>{{"hf-llama", llama}, {"hf-mistral", llama}, {"hf-qwen2", qwen2},
                                         {"hf-qwen3", qwen3}, {"hf-olmo2", olmo2}, {"hf-gemma2", gemma2},
                                         {"hf-neox", neox}}) {
    INFO(k.format);
    TempDir dir;
    Model m(k.cfg);
    InitConfig init;
    init.seed = 5;
    initialize(m, init);
    for (Param& p : m.params().all())  // norms and biases away from their 1 / 0 initialization
      p.value.array() += 0.01 * static_cast<double>(&p - &m.params().all()[0] + 1);
    write_hf_checkpoint(dir.path(), k.format, to_tensors(m.params()), m.config());
    const Checkpoint c = read_checkpoint(dir.path());
    CHECK(c.format == k.format);
    ModelConfig back;
    apply_checkpoint(c, GivenSizes{}, GivenArch{}, back);
    Model r(back);
    load_checkpoint_params(c, r.params());
    REQUIRE(r.params().size() == m.params().size());
    for (const Param& p : m.params().all()) {
      INFO(p.name);
      CHECK(r.params().at(p.name) == p.value);
    }
  }
  TempDir dir;
  ModelConfig wrong = qwen3;
  Model m(wrong);
  CHECK_THAT(error_of([&] { write_hf_checkpoint(dir.path(), "hf-llama", to_tensors(m.params()), wrong); }),
             Contains("--format hf-llama writes Llama: Pre-RMSNorm, SwiGLU, RoPE, grouped-query heads, layers "
                      "model.layers.{i}, but the model has --qk-norm head (hf-llama: none); fix: build the model with "
                      "the family's block (e.g. --arch llama)"));
  ModelConfig post = llama;
  post.placement = "post";
  Model p(post);
  CHECK_THAT(error_of([&] { write_hf_checkpoint(dir.path(), "hf-qwen3", to_tensors(p.params()), post); }),
             Contains("--placement post (hf-qwen3: pre)"));
}

TEST_CASE("the memory guard counts a Qwen3-0.6B-sized checkpoint from its headers, before any data is read",
          "[io][checkpoint][decoder]") {
  // Qwen3-0.6B's shapes: 28 layers, d = 1024, 16 heads and 8 key/value heads of 128, d_ff 3072, 151936 tokens (tied).
  // BF16 in a sparse file: the header is real, the 1.2 GB of data are never read (zeros on disk only where written).
  const int64_t L = 28, d = 1024, h = 16, K = 8, e = 128, f = 3072, vocab = 151936;
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {{"model.embed_tokens.weight", {vocab, d}},
                                                                       {"model.norm.weight", {d}}};
  for (int64_t i = 0; i < L; ++i) {
    const std::string s = "model.layers." + std::to_string(i) + ".";
    for (const auto& [n, shape] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
             {"self_attn.q_proj.weight", {h * e, d}}, {"self_attn.k_proj.weight", {K * e, d}},
             {"self_attn.v_proj.weight", {K * e, d}}, {"self_attn.o_proj.weight", {d, h * e}},
             {"self_attn.q_norm.weight", {e}}, {"self_attn.k_norm.weight", {e}},
             {"mlp.gate_proj.weight", {f, d}}, {"mlp.up_proj.weight", {f, d}}, {"mlp.down_proj.weight", {d, f}},
             {"input_layernorm.weight", {d}}, {"post_attention_layernorm.weight", {d}}})
      shapes.push_back({s + n, shape});
  }
  std::string header = "{";
  int64_t offset = 0;
  double block_values = 0, largest = 0;
  for (const auto& [name, shape] : shapes) {
    int64_t n = 1;
    std::string dims;
    for (int64_t v : shape) n *= v, dims += (dims.empty() ? "" : ",") + std::to_string(v);
    header += std::string(header.size() > 1 ? "," : "") + "\"" + name + "\":{\"dtype\":\"BF16\",\"shape\":[" + dims +
              "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + 2 * n) + "]}";
    offset += 2 * n;
    if (name != "model.embed_tokens.weight") block_values += static_cast<double>(n);
  }
  header += "}";
  largest = static_cast<double>((h + 2 * K) * e * d);  // the stacked q, k, v: the largest tensor built
  TempDir dir;
  test::write_bytes(dir.file("model.safetensors"), test::le_bytes(header.size(), 8) + header);
  std::error_code ec;
  std::filesystem::resize_file(dir.file("model.safetensors"), 8 + header.size() + static_cast<uint64_t>(offset), ec);
  REQUIRE_FALSE(ec);
  test::write_bytes(dir.file("config.json"),
                    R"({"model_type": "qwen3", "hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 8,
                        "head_dim": 128, "num_hidden_layers": 28, "intermediate_size": 3072, "vocab_size": 151936,
                        "tie_word_embeddings": true, "rope_theta": 1000000, "rms_norm_eps": 1e-6})");
  CheckpointLoad seen;
  const auto stop = [&](const CheckpointLoad& load) {
    seen = load;
    throw Error("stopped before reading");
  };
  CHECK_THAT(error_of([&] { read_checkpoint(dir.path(), "auto", true, stop, true); }), Contains("stopped before reading"));
  CHECK(seen.format == "hf-qwen3");
  CHECK(seen.embedding_values == static_cast<double>(vocab * d));  // tied: the embedding is the head, counted once
  CHECK(seen.block_values == block_values);
  CHECK(seen.largest_values == largest);
  CHECK(seen.kept_bytes() == 8.0 * (block_values + static_cast<double>(vocab * d)));  // 4.8 GB in double
  // the run's guard refuses it by name under a budget, before reading
  RunConfig rc;
  rc.weights = dir.path();
  rc.token_ids = {1, 2, 3};
  rc.analysis.loss = "lm";
  rc.analysis.max_memory_bytes = 1e9;
  CHECK_THAT(error_of([&] { apply_file_sizes(rc, GivenSizes{}); }),
             Contains("loading --weights '" + dir.path() + "' (hf-qwen3) needs about"));
  CHECK_THAT(error_of([&] { apply_file_sizes(rc, GivenSizes{}); }), Contains("its embeddings in double (--token-ids)"));
}
