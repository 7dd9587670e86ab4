// test_checkpoint.cpp — --weights in the Hugging Face layouts (src/io/checkpoint.cpp, hf_layouts.cpp): the name
// maps (q/k/v stacking order, Conv1D transposition, ln_f as the final norm), format detection, config.json, shards,
// and every broken layout refused with a one-line error naming the file, the tensor and the fix. The numerical
// equivalence with the families' equations is tests/pytorch/test_hf_checkpoints.py.
#include <catch2/catch.hpp>
#include <fstream>

#include "gradflow/io/checkpoint.hpp"
#include "gradflow/run/engine.hpp"
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

// GPT-2 tensors (d, d_ff), layers `layers`, prefix `p`, plus wte and the attn.bias buffer.
std::vector<SafeTensor> gpt2_tensors(const std::vector<int>& layers, int64_t d, int64_t f, const std::string& p = "") {
  std::vector<SafeTensor> t = {counting(p + "wte.weight", {5, d}, 0), counting(p + "ln_f.weight", {d}, 1),
                               counting(p + "ln_f.bias", {d}, 2)};
  for (int i : layers) {
    const std::string s = p + "h." + std::to_string(i) + ".";
    const double b = 1000.0 * (i + 1);
    t.push_back(counting(s + "ln_1.weight", {d}, b + 1));
    t.push_back(counting(s + "ln_1.bias", {d}, b + 2));
    t.push_back(counting(s + "attn.c_attn.weight", {d, 3 * d}, b + 100));
    t.push_back(counting(s + "attn.c_attn.bias", {3 * d}, b + 3));
    t.push_back(counting(s + "attn.c_proj.weight", {d, d}, b + 200));
    t.push_back(counting(s + "attn.c_proj.bias", {d}, b + 4));
    t.push_back(counting(s + "ln_2.weight", {d}, b + 5));
    t.push_back(counting(s + "ln_2.bias", {d}, b + 6));
    t.push_back(counting(s + "mlp.c_fc.weight", {d, f}, b + 300));
    t.push_back(counting(s + "mlp.c_fc.bias", {f}, b + 7));
    t.push_back(counting(s + "mlp.c_proj.weight", {f, d}, b + 400));
    t.push_back(counting(s + "mlp.c_proj.bias", {d}, b + 8));
    t.push_back(counting(s + "attn.bias", {1, 1, 4, 4}, 0));
  }
  return t;
}

std::vector<SafeTensor> bert_tensors(int layers, int64_t d, int64_t f, const std::string& p = "") {
  std::vector<SafeTensor> t = {counting(p + "embeddings.word_embeddings.weight", {7, d}, 0),
                               counting(p + "pooler.dense.weight", {d, d}, 0)};
  for (int i = 0; i < layers; ++i) {
    const std::string s = p + "encoder.layer." + std::to_string(i) + ".";
    const double b = 1000.0 * (i + 1);
    t.push_back(counting(s + "attention.self.query.weight", {d, d}, b + 100));
    t.push_back(counting(s + "attention.self.query.bias", {d}, b + 10));
    t.push_back(counting(s + "attention.self.key.weight", {d, d}, b + 200));
    t.push_back(counting(s + "attention.self.key.bias", {d}, b + 20));
    t.push_back(counting(s + "attention.self.value.weight", {d, d}, b + 300));
    t.push_back(counting(s + "attention.self.value.bias", {d}, b + 30));
    t.push_back(counting(s + "attention.output.dense.weight", {d, d}, b + 400));
    t.push_back(counting(s + "attention.output.dense.bias", {d}, b + 40));
    t.push_back(counting(s + "attention.output.LayerNorm.weight", {d}, b + 50));
    t.push_back(counting(s + "attention.output.LayerNorm.bias", {d}, b + 60));
    t.push_back(counting(s + "intermediate.dense.weight", {f, d}, b + 500));
    t.push_back(counting(s + "intermediate.dense.bias", {f}, b + 70));
    t.push_back(counting(s + "output.dense.weight", {d, f}, b + 600));
    t.push_back(counting(s + "output.dense.bias", {d}, b + 80));
    t.push_back(counting(s + "output.LayerNorm.weight", {d}, b + 90));
    t.push_back(counting(s + "output.LayerNorm.bias", {d}, b + 95));
  }
  return t;
}

void write_text(const std::string& path, const std::string& text) { test::write_bytes(path, text); }

std::string gpt2_config(int layers, int d, int heads, const std::string& extra = "") {
  return R"({"model_type": "gpt2", "n_embd": )" + std::to_string(d) + R"(, "n_head": )" + std::to_string(heads) +
         R"(, "n_layer": )" + std::to_string(layers) +
         R"(, "n_inner": null, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5)" + extra + "}";
}

}  // namespace

TEST_CASE("hf-gpt2: Conv1D weights transposed / q/k/v columns kept in order / ln_f the final norm", "[io][checkpoint]") {
  TempDir dir;
  write_safetensors(dir.file("model.safetensors"), gpt2_tensors({0, 1}, 4, 16, "transformer."));
  write_text(dir.file("config.json"), gpt2_config(2, 4, 2));
  const Checkpoint c = read_checkpoint(dir.path());
  CHECK(c.format == "hf-gpt2");
  CHECK(c.config_path == dir.file("config.json"));
  const SafeTensor& in = named(c, "layers.1.self_attn.in_proj_weight");
  REQUIRE(in.shape == std::vector<int64_t>{12, 4});
  // gradflow row r (output feature r: q for r < 4, k, then v), column c (input) = c_attn[c][r] = base + c*12 + r
  for (int64_t r = 0; r < 12; ++r)
    for (int64_t col = 0; col < 4; ++col) CHECK(in.data[static_cast<size_t>(r * 4 + col)] == 2100.0 + col * 12 + r);
  CHECK(named(c, "layers.0.linear1.weight").shape == std::vector<int64_t>{16, 4});
  CHECK(named(c, "layers.0.linear2.weight").shape == std::vector<int64_t>{4, 16});
  CHECK(named(c, "norm.weight").data[0] == 1.0);
  CHECK(c.source_names.at("layers.0.self_attn.in_proj_weight") == "transformer.h.0.attn.c_attn.weight (transposed)");
  CHECK(c.source_names.at("norm.bias") == "transformer.ln_f.bias");
  CHECK(c.outside == std::vector<std::string>{"transformer.wte.weight", "transformer.h.0.attn.bias",
                                              "transformer.h.1.attn.bias"});
  ModelConfig cfg;
  apply_checkpoint(c, GivenSizes{}, GivenArch{}, cfg);
  CHECK(cfg.placement == "pre");
  CHECK(cfg.causal);
  CHECK(cfg.heads == 2);
  CHECK(cfg.layers == 2);
  CHECK(cfg.d_model == 4);
  CHECK(cfg.ff() == 16);
  CHECK(cfg.activation == Activation::GeluTanh);
  CHECK(cfg.final_norm == std::optional<bool>(true));
  CHECK(cfg.norm_eps == 1e-5);
}

TEST_CASE("hf-bert: q / k / v stacked in that order / LayerNorm gamma/beta accepted / eps from config", "[io][checkpoint]") {
  TempDir dir;
  auto t = bert_tensors(1, 4, 8, "bert.");
  for (auto& x : t) {  // the old LayerNorm names
    const auto at = x.name.find("LayerNorm.weight");
    if (at != std::string::npos) x.name.replace(at, 16, "LayerNorm.gamma");
  }
  write_safetensors(dir.file("model.safetensors"), t);
  write_text(dir.file("config.json"), R"({"model_type": "bert", "hidden_size": 4, "num_attention_heads": 1,
      "num_hidden_layers": 1, "intermediate_size": 8, "hidden_act": "gelu", "layer_norm_eps": 1e-12})");
  const Checkpoint c = read_checkpoint(dir.path());
  CHECK(c.format == "hf-bert");
  const SafeTensor& in = named(c, "layers.0.self_attn.in_proj_weight");
  REQUIRE(in.shape == std::vector<int64_t>{12, 4});
  CHECK(in.data[0] == 1100.0);   // query row 0
  CHECK(in.data[16] == 1200.0);  // key row 0
  CHECK(in.data[32] == 1300.0);  // value row 0
  CHECK(named(c, "layers.0.self_attn.in_proj_bias").data[4] == 1020.0);
  CHECK(c.source_names.at("layers.0.norm1.weight") == "bert.encoder.layer.0.attention.output.LayerNorm.gamma");
  ModelConfig cfg;
  apply_checkpoint(c, GivenSizes{}, GivenArch{}, cfg);
  CHECK(cfg.placement == "post");
  CHECK_FALSE(cfg.causal);
  CHECK(cfg.activation == Activation::Gelu);
  CHECK(cfg.norm_eps == 1e-12);
  CHECK(cfg.final_norm == std::optional<bool>(false));
}

TEST_CASE("auto format: config's model_type / else prefixes / else BERT's names / torch-encoder kept", "[io][checkpoint]") {
  TempDir dir;
  write_safetensors(dir.file("r.safetensors"), bert_tensors(1, 4, 8, "roberta."));
  write_safetensors(dir.file("b.safetensors"), bert_tensors(1, 4, 8));
  write_safetensors(dir.file("g.safetensors"), gpt2_tensors({0}, 4, 8));
  write_safetensors(dir.file("t.safetensors"), {counting("layers.0.self_attn.in_proj_weight", {12, 4}, 0)});
  CHECK(read_checkpoint(dir.file("r.safetensors")).format == "hf-roberta");
  CHECK(read_checkpoint(dir.file("b.safetensors")).format == "hf-bert");  // an unprefixed RoBERTa reads the same
  CHECK(read_checkpoint(dir.file("b.safetensors"), "hf-roberta").format == "hf-roberta");
  CHECK(read_checkpoint(dir.file("g.safetensors")).format == "hf-gpt2");
  CHECK(read_checkpoint(dir.file("t.safetensors")).format == "torch-encoder");
  CHECK(read_checkpoint(dir.file("t.safetensors")).tensors.size() == 1);
  write_safetensors(dir.file("x.safetensors"), {counting("model.decoder.layers.0.fc1.weight", {2, 2}, 0)});
  const std::string msg = error_of([&] { read_checkpoint(dir.file("x.safetensors")); });
  CHECK_THAT(msg, Contains("no known layout: the tensor names start with 'model.*'"));
  CHECK_THAT(msg, Contains("hf-gpt2 ([transformer.]h.{i}.*)"));
  CHECK_THAT(msg, Contains("fix: pass --weights-format"));
  CHECK_THAT(error_of([&] { read_checkpoint(dir.file("g.safetensors"), "hf-bert"); }),
             Contains("no tensor is named encoder.layer.{i}.*"));
  CHECK_THAT(error_of([&] { read_checkpoint(dir.file("g.safetensors"), "gpt3"); }),
             Contains("--weights-format 'gpt3' is not one of auto | torch-encoder | hf-bert | hf-roberta | hf-gpt2"));
}

TEST_CASE("sharded checkpoints: the index and its shards read together / a broken index refused", "[io][checkpoint]") {
  TempDir dir;
  const auto all = gpt2_tensors({0, 1}, 4, 16);
  std::vector<SafeTensor> a(all.begin(), all.begin() + 10), b(all.begin() + 10, all.end());
  write_safetensors(dir.file("model-00001-of-00002.safetensors"), a);
  write_safetensors(dir.file("model-00002-of-00002.safetensors"), b);
  write_text(dir.file("config.json"), gpt2_config(2, 4, 2));
  std::string map;
  for (const auto& t : a) map += (map.empty() ? "\"" : ", \"") + t.name + "\": \"model-00001-of-00002.safetensors\"";
  for (const auto& t : b) map += ", \"" + t.name + "\": \"model-00002-of-00002.safetensors\"";
  write_text(dir.file("model.safetensors.index.json"), R"({"metadata": {}, "weight_map": {)" + map + "}}");
  const Checkpoint c = read_checkpoint(dir.path());
  CHECK(c.files.size() == 2);
  CHECK(c.tensors.size() == 2 * 12 + 2);
  // the same through the index file itself
  CHECK(read_checkpoint(dir.file("model.safetensors.index.json")).tensors.size() == 26);

  // a shard the index names is missing
  std::filesystem::rename(dir.file("model-00002-of-00002.safetensors"), dir.file("elsewhere.safetensors"));
  const std::string msg = error_of([&] { read_checkpoint(dir.path()); });
  CHECK_THAT(msg, Contains("names shard 'model-00002-of-00002.safetensors'"));
  CHECK_THAT(msg, Contains("which does not exist; fix: download every shard"));
  // a shard name that leaves the folder
  write_text(dir.file("model.safetensors.index.json"), R"({"weight_map": {"h.0.ln_1.weight": "../x.safetensors"}})");
  CHECK_THAT(error_of([&] { read_checkpoint(dir.path()); }), Contains("is not a file name in the index's folder"));
  // the index maps a tensor to a shard that does not hold it
  std::filesystem::rename(dir.file("elsewhere.safetensors"), dir.file("model-00002-of-00002.safetensors"));
  write_text(dir.file("model.safetensors.index.json"),
             R"({"weight_map": {"wte.weight": "model-00002-of-00002.safetensors"}})");
  CHECK_THAT(error_of([&] { read_checkpoint(dir.path()); }), Contains("maps tensor 'wte.weight' to shard"));
}

TEST_CASE("broken layouts: missing layer / wrong shape / foreign tensor / config contradictions", "[io][checkpoint]") {
  TempDir dir;
  write_safetensors(dir.file("gap.safetensors"), gpt2_tensors({0, 2}, 4, 16));
  CHECK_THAT(error_of([&] { read_checkpoint(dir.file("gap.safetensors")); }),
             Contains("tensor 'h.1.attn.c_attn.weight' is missing (gradflow's layers.1.self_attn.in_proj_weight needs it)"));

  auto bad = gpt2_tensors({0}, 4, 16);
  for (auto& t : bad)
    if (t.name == "h.0.attn.c_attn.weight") t = counting(t.name, {4, 8}, 0);
  write_safetensors(dir.file("shape.safetensors"), bad);
  CHECK_THAT(error_of([&] { read_checkpoint(dir.file("shape.safetensors")); }),
             Contains("h.0.attn.c_attn.weight (transposed) gives q, k, v of shape [8, 4]"));

  auto cross = bert_tensors(1, 4, 8);
  cross.push_back(counting("encoder.layer.0.crossattention.self.query.weight", {4, 4}, 0));
  write_safetensors(dir.file("cross.safetensors"), cross);
  CHECK_THAT(error_of([&] { read_checkpoint(dir.file("cross.safetensors")); }),
             Contains("tensor 'encoder.layer.0.crossattention.self.query.weight' is part of layer 0 but gradflow's "
                      "block has no place for it"));

  // config.json against the tensors, and against the options
  write_safetensors(dir.file("model.safetensors"), gpt2_tensors({0, 1}, 4, 16));
  write_text(dir.file("config.json"), gpt2_config(3, 4, 2));
  ModelConfig cfg;
  CHECK_THAT(error_of([&] { apply_checkpoint(read_checkpoint(dir.path()), GivenSizes{}, GivenArch{}, cfg); }),
             Contains("says the number of layers = 3 but the tensors of"));
  write_text(dir.file("config.json"), gpt2_config(2, 4, 2));
  const Checkpoint c = read_checkpoint(dir.path());
  GivenArch heads;
  heads.heads = 4;
  CHECK_THAT(error_of([&] { apply_checkpoint(c, GivenSizes{}, heads, cfg); }),
             Contains("--heads 4 contradicts config.json"));
  GivenArch act;
  act.activation = Activation::Gelu;
  CHECK_THAT(error_of([&] { apply_checkpoint(c, GivenSizes{}, act, cfg); }),
             Contains("--activation gelu contradicts config.json"));
  GivenArch place;
  place.placement = "post";
  CHECK_THAT(error_of([&] { apply_checkpoint(c, GivenSizes{}, place, cfg); }),
             Contains("--placement post contradicts the hf-gpt2 checkpoint"));
  GivenSizes layers;
  layers.layers = 5;
  CHECK_THAT(error_of([&] { apply_checkpoint(c, layers, GivenArch{}, cfg); }), Contains("--layers 5 contradicts"));
  // without config.json the heads must be given
  CHECK_THAT(error_of([&] { apply_checkpoint(read_checkpoint(dir.file("model.safetensors")), GivenSizes{}, GivenArch{}, cfg); }),
             Contains("has no config.json, and the number of attention heads is not in the tensors; fix: pass --heads"));

  write_text(dir.file("config.json"), gpt2_config(2, 4, 2, R"(, "scale_attn_by_inverse_layer_idx": true)"));
  CHECK_THAT(error_of([&] { read_checkpoint(dir.path()); }), Contains("\"scale_attn_by_inverse_layer_idx\" is true"));
  write_text(dir.file("config.json"), R"({"model_type": "mixtral"})");
  CHECK_THAT(error_of([&] { read_checkpoint(dir.path()); }), Contains("model_type 'mixtral' is not one gradflow reads"));
  write_text(dir.file("config.json"), R"({"model_type": "gpt2", "activation_function": "swish"})");
  CHECK_THAT(error_of([&] { read_checkpoint(dir.path()); }), Contains("'activation_function' is 'swish'"));
  write_text(dir.file("config.json"), "{not json");
  CHECK_THAT(error_of([&] { read_checkpoint(dir.path()); }), Contains("not valid JSON"));
  std::filesystem::remove(dir.file("model.safetensors"));
  CHECK_THAT(error_of([&] { read_checkpoint(dir.path()); }),
             Contains("the folder has neither model.safetensors nor model.safetensors.index.json"));
}

TEST_CASE("token ids: embeddings read on request / ids and positions checked / --loss lm needs GPT-2 and ids", "[io][checkpoint]") {
  TempDir dir;
  write_safetensors(dir.file("model.safetensors"), gpt2_tensors({0}, 4, 8));  // wte (5, 4), no wpe
  write_text(dir.file("config.json"), R"({"model_type": "gpt2", "n_embd": 4, "n_head": 2, "n_layer": 1, "n_inner": 8})");
  CHECK(read_checkpoint(dir.path()).embeddings.empty());  // not read unless asked
  CHECK_THAT(error_of([&] { read_checkpoint(dir.path(), "auto", true); }),
             Contains("--token-ids needs the embeddings, but tensor 'wpe.weight' is missing"));
  auto t = gpt2_tensors({0}, 4, 8);
  t.push_back(counting("wpe.weight", {3, 4}, 0.5));
  write_safetensors(dir.file("model.safetensors"), t);
  const Checkpoint c = read_checkpoint(dir.path(), "auto", true);
  const Mat x = embed_tokens(c, {4, 0});
  CHECK(x(0, 1) == (16.0 + 1.0) + (0.5 + 1.0));  // wte[4][1] + wpe[0][1]
  CHECK(x(1, 3) == 3.0 + (0.5 + 7.0));             // wte[0][3] + wpe[1][3]
  CHECK_THAT(error_of([&] { embed_tokens(c, {5}); }), Contains("id 5 (token 0) is outside the vocabulary of 5 tokens"));
  CHECK_THAT(error_of([&] { embed_tokens(c, {1, 1, 1, 1}); }),
             Contains("--token-ids: 4 ids, but wpe.weight has 3 positions, room for 3; fix: give at most 3 ids"));
  CHECK(token_positions(c, {1, 1, 1}) == std::vector<Index>{0, 1, 2});

  RunConfig rc;
  rc.token_ids = {1, 2};
  CHECK_THAT(error_of([&] { RunConfig r = rc; apply_file_sizes(r, GivenSizes{}); }), Contains("--token-ids needs --weights"));
  rc.weights = dir.path();
  rc.analysis.loss = "lm";
  RunConfig ok = rc;
  apply_file_sizes(ok, GivenSizes{});
  CHECK(ok.analysis.seq_len == 2);
  CHECK(ok.model.causal);
  rc.token_ids = {1};
  CHECK_THAT(error_of([&] { RunConfig r = rc; apply_file_sizes(r, GivenSizes{}); }), Contains("needs at least two ids"));
  // far too many ids: refused as such when the sizes are settled, before any memory estimate sees 30000 tokens
  rc.token_ids.assign(30000, 1);
  CHECK_THAT(error_of([&] { RunConfig r = rc; apply_file_sizes(r, GivenSizes{}); }),
             Contains("30000 ids, but wpe.weight has 3 positions"));
  RunConfig bert = rc;
  write_safetensors(dir.file("bert.safetensors"), bert_tensors(1, 4, 8));
  bert.weights = dir.file("bert.safetensors");
  bert.token_ids = {1, 2};
  GivenArch heads;
  heads.heads = 2;
  CHECK_THAT(error_of([&] { apply_file_sizes(bert, GivenSizes{}, heads); }),
             Contains("--token-ids needs the embeddings, but tensor 'embeddings.position_embeddings.weight' is missing"));
}

TEST_CASE("RoBERTa positions: pad_token_id 0 accepted / one past the table named as the config's / padding ids share one",
          "[io][checkpoint]") {
  TempDir dir;
  auto t = bert_tensors(1, 4, 8);
  t.push_back(counting("embeddings.position_embeddings.weight", {20, 4}, 0.25));
  t.push_back(counting("embeddings.token_type_embeddings.weight", {1, 4}, 0.5));
  t.push_back(counting("embeddings.LayerNorm.weight", {4}, 1));
  t.push_back(counting("embeddings.LayerNorm.bias", {4}, 0));
  write_safetensors(dir.file("model.safetensors"), t);
  const auto config = [&](const std::string& pad) {
    write_text(dir.file("config.json"), R"({"model_type": "roberta", "hidden_size": 4, "num_attention_heads": 2,
      "num_hidden_layers": 1, "intermediate_size": 8, "hidden_act": "gelu", "pad_token_id": )" + pad + "}");
  };
  config("0");  // positions 1, 2, ... (padding id 0 at position 0)
  const Checkpoint zero = read_checkpoint(dir.path(), "auto", true);
  CHECK(zero.padding_idx == 0);
  CHECK(token_positions(zero, {5, 0, 6}) == std::vector<Index>{1, 0, 2});
  CHECK(token_positions(zero, std::vector<int64_t>(19, 3)).back() == 19);  // 19 ids besides padding fit 20 positions
  CHECK_THAT(error_of([&] { token_positions(zero, std::vector<int64_t>(20, 3)); }),
             Contains("20 ids besides padding, but embeddings.position_embeddings.weight has 20 positions (from "
                      "pad_token_id + 1 = 1 on), room for 19; fix: give at most 19 ids besides padding"));
  std::vector<int64_t> padded(19, 3);
  padded.insert(padded.end(), 5, 0);  // padding ids take no position of their own
  CHECK(token_positions(zero, padded).size() == 24);
  config("-1");
  CHECK_THAT(error_of([&] { read_checkpoint(dir.path(), "auto", true); }),
             Contains("\"pad_token_id\" is -1, not a non-negative integer"));
  config("25");  // even one id lies beyond the 20 positions: the config is at fault, not the number of ids
  const Checkpoint far = read_checkpoint(dir.path(), "auto", true);
  CHECK_THAT(error_of([&] { token_positions(far, {3}); }),
             Contains("its pad_token_id 25 puts the first token at position 26, but "
                      "embeddings.position_embeddings.weight has 20 positions; fix: restore the config.json"));
}

TEST_CASE("config.json: heads that do not divide the width / no heads / deep nesting, named as the config's", "[io][checkpoint]") {
  TempDir dir;
  write_safetensors(dir.file("model.safetensors"), gpt2_tensors({0}, 4, 16));
  ModelConfig cfg;
  write_text(dir.file("config.json"), gpt2_config(1, 4, 3));
  CHECK_THAT(error_of([&] { apply_checkpoint(read_checkpoint(dir.path()), GivenSizes{}, GivenArch{}, cfg); }),
             Contains("says n_head = 3, which does not divide the width d = 4 of the tensors of"));
  write_text(dir.file("config.json"), R"({"model_type": "gpt2", "n_embd": 4, "n_layer": 1})");
  const std::string none = error_of([&] { apply_checkpoint(read_checkpoint(dir.path()), GivenSizes{}, GivenArch{}, cfg); });
  CHECK_THAT(none, Contains("has no \"n_head\" (the number of attention heads)"));
  CHECK_THAT(none, !Contains("has no config.json"));
  GivenArch heads;  // --heads supplies what the config lacks
  heads.heads = 2;
  CHECK_NOTHROW(apply_checkpoint(read_checkpoint(dir.path()), GivenSizes{}, heads, cfg));
  std::string deep(200000, '[');
  deep = R"({"model_type": "gpt2", "x": )" + deep + std::string(200000, ']') + "}";
  write_text(dir.file("config.json"), deep);
  CHECK_THAT(error_of([&] { read_checkpoint(dir.path()); }), Contains("nests deeper than 64 levels"));
}

TEST_CASE("loading: what will be held is known from the headers, before any data is read / the guard refuses", "[io][checkpoint]") {
  TempDir dir;
  auto t = gpt2_tensors({0, 1}, 4, 16);
  t.push_back(counting("wpe.weight", {3, 4}, 0.5));
  write_safetensors(dir.file("model.safetensors"), t);
  write_text(dir.file("config.json"), gpt2_config(2, 4, 2));
  // per layer: ln_1 2*4, c_attn 4*12 + 12, c_proj 16 + 4, ln_2 8, c_fc 64 + 16, c_proj 64 + 4 = 244; ln_f 8
  const double block = 2 * 244 + 8, embeddings = 5 * 4 + 3 * 4, largest = 64;
  CheckpointLoad seen;
  const Checkpoint c = read_checkpoint(dir.path(), "auto", true, [&](const CheckpointLoad& l) { seen = l; });
  CHECK(seen.format == "hf-gpt2");
  CHECK(seen.block_values == block);
  CHECK(seen.embedding_values == embeddings);
  CHECK(seen.largest_values == largest);
  CHECK(seen.kept_bytes() == (block + embeddings) * 8);
  CHECK(seen.peak_bytes() == (block + embeddings) * 8 + 2 * largest * 8);  // + the tensor built + its read buffer
  CHECK(checkpoint_kept_bytes(c) == seen.kept_bytes());                    // what was read is what was announced
  // a guard that throws stops the load before any tensor data is read
  CHECK_THAT(error_of([&] { read_checkpoint(dir.path(), "auto", false, [](const CheckpointLoad&) { throw Error("no"); }); }),
             Contains("no"));
  // through the run: --max-memory below the load is refused naming the load and its parts
  RunConfig rc;
  rc.weights = dir.path();
  rc.analysis.max_memory_bytes = 100;
  CHECK_THAT(error_of([&] { apply_file_sizes(rc, GivenSizes{}); }),
             Contains("loading --weights '" + dir.path() + "' (hf-gpt2) needs about"));
  rc.analysis.max_memory_bytes = 0;
  apply_file_sizes(rc, GivenSizes{});
  CHECK(rc.analysis.checkpoint_bytes == block * 8);  // kept for the run (no embeddings without --token-ids)
  // ... and the engine's estimate counts it
  const MemoryEstimate e = explicit_memory(rc.model, rc.analysis.seq_len);
  const RunBackend cpu(rc.analysis.backend);
  CHECK(choose_engine(rc.model, rc.analysis, cpu).explicit_bytes == e.total() + block * 8);
}

TEST_CASE("broken layouts: a feed-forward tensor of the wrong shape is named with both shapes", "[io][checkpoint]") {
  TempDir dir;
  auto bad = gpt2_tensors({0, 1}, 4, 16);
  for (auto& t : bad)
    if (t.name == "h.1.mlp.c_proj.weight") t = counting(t.name, {4, 4}, 0);  // (d, d) where (d_ff, d) belongs
  write_safetensors(dir.file("model.safetensors"), bad);
  write_text(dir.file("config.json"), gpt2_config(2, 4, 2));
  RunConfig rc;
  rc.weights = dir.path();
  apply_file_sizes(rc, GivenSizes{});
  Model m(rc.model);
  const std::string msg = error_of([&] { prepare_run(rc, m); });
  CHECK_THAT(msg, Contains("layers.1.linear2.weight"));
  CHECK_THAT(msg, Contains("h.1.mlp.c_proj.weight"));
  CHECK_THAT(msg, Contains("[4, 16]"));  // what the model needs (transposed from the file's (16, 4))
}
