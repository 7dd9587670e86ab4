// test_load_weights.cpp — loading a state_dict into the model: sizes inferred from names and shapes, the
// export -> load round trip (bit-exact parameters, same forward pass), and every rejected case (missing
// tensor, wrong shape, contradicting size options, --input/--cotangent shapes), each an Error naming the file.
#include <algorithm>
#include <catch2/catch.hpp>

#include "gradflow/run/run_inputs.hpp"
#include "gradflow/io/load_weights.hpp"
#include "gradflow/io/npy.hpp"
#include "gradflow/model/init.hpp"
#include "temp_dir.hpp"

using namespace gradflow;
using Catch::Matchers::Contains;
using test::error_of;
using test::TempDir;

namespace {

ModelConfig small_config(const std::string& placement, bool final_norm) {
  ModelConfig c;
  c.placement = placement;
  c.layers = 2;
  c.d_model = 8;
  c.heads = 2;
  c.d_ff = 12;
  c.final_norm = final_norm;
  return c;
}

// A seeded model's tensors, with LayerNorm gains/biases moved away from 1 and 0 so a mix-up shows.
std::vector<SafeTensor> model_tensors(const ModelConfig& c) {
  Model m(c);
  InitConfig init;
  init.seed = 7;
  initialize(m, init);
  for (Param& p : m.params().all())
    if (p.name.find("norm") != std::string::npos) p.value.array() += random_normal(3, p.name, 1, p.value.cols()).array();
  return to_tensors(m.params());
}

std::vector<SafeTensor> without(std::vector<SafeTensor> t, const std::string& name) {
  t.erase(std::remove_if(t.begin(), t.end(), [&](const SafeTensor& s) { return s.name == name; }), t.end());
  return t;
}

}  // namespace

TEST_CASE("load_weights: sizes come from the names and shapes", "[io][load_weights]") {
  const auto post = model_tensors(small_config("post", true));
  const CheckpointSizes s = checkpoint_sizes(post, "a.safetensors");
  CHECK(s.layers == 2);
  CHECK(s.d_model == 8);
  CHECK(s.d_ff == 12);
  CHECK(s.final_norm);
  CHECK_FALSE(checkpoint_sizes(model_tensors(small_config("pre", false)), "b.safetensors").final_norm);

  ModelConfig cfg;  // defaults L = 6, d = 64 are replaced, heads and placement kept
  cfg.heads = 2;
  apply_checkpoint_sizes(s, GivenSizes{}, "a.safetensors", cfg);
  CHECK(cfg.layers == 2);
  CHECK(cfg.d_model == 8);
  CHECK(cfg.ff() == 12);
  CHECK(cfg.final_norm == std::optional<bool>(true));
  GivenSizes same;
  same.layers = 2;
  same.d_model = 8;
  same.d_ff = 12;
  CHECK(error_of([&] { apply_checkpoint_sizes(s, same, "a.safetensors", cfg); }).empty());
}

TEST_CASE("load_weights: export then load gives bit-identical parameters and the same forward pass",
          "[io][load_weights]") {
  TempDir dir;
  for (const char* placement : {"post", "pre", "deepnorm", "sandwich"}) {
    INFO("placement " << placement);
    const ModelConfig c = small_config(placement, true);
    const auto tensors = model_tensors(c);
    const std::string path = dir.file(std::string(placement) + ".safetensors");
    write_safetensors(path, tensors);

    ModelConfig loaded_cfg;
    loaded_cfg.placement = placement;
    loaded_cfg.heads = 2;
    const auto read = read_safetensors(path);
    apply_checkpoint_sizes(checkpoint_sizes(read, path), GivenSizes{}, path, loaded_cfg);
    Model loaded(loaded_cfg);
    CHECK(load_params(loaded.params(), read, path).empty());

    Model original(c);
    for (size_t i = 0; i < tensors.size(); ++i)
      original.params().at(tensors[i].name) = ConstMatMap(tensors[i].data.data(), original.params().at(tensors[i].name).rows(),
                                                          original.params().at(tensors[i].name).cols());
    REQUIRE(loaded.params().size() == original.params().size());
    for (size_t i = 0; i < loaded.params().size(); ++i)
      CHECK(loaded.params()[static_cast<int>(i)] == original.params()[static_cast<int>(i)]);
    const Mat x = random_normal(1, "input", 5, 8);
    CHECK(loaded.forward(x).y == original.forward(x).y);
  }
}

TEST_CASE("load_weights: missing tensor, wrong shape and unknown names", "[io][load_weights]") {
  const ModelConfig c = small_config("post", true);
  const auto tensors = model_tensors(c);
  Model m(c);

  const std::string missing =
      error_of([&] { load_params(m.params(), without(tensors, "layers.1.norm2.bias"), "ck.safetensors"); });
  CHECK_THAT(missing, Contains("'ck.safetensors'") && Contains("'layers.1.norm2.bias'") && Contains("is missing"));

  auto wrong = tensors;
  for (auto& t : wrong)
    if (t.name == "layers.1.linear2.weight") t.shape = {12, 8};
  const std::string shape = error_of([&] { load_params(m.params(), wrong, "ck.safetensors"); });
  CHECK_THAT(shape, Contains("'ck.safetensors'") && Contains("'layers.1.linear2.weight'") &&
                        Contains("has shape [12, 8] but the model needs [8, 12]"));

  auto extra = tensors;
  extra.push_back({"decoder.bias", "", {2}, {1, 2}});
  const auto unused = load_params(m.params(), extra, "ck.safetensors");
  REQUIRE(unused.size() == 1);
  CHECK(unused[0] == "decoder.bias");

  // A placement with parameters a PyTorch encoder lacks: ReZero's gates are missing from a Post-LN file.
  ModelConfig rz = c;
  rz.placement = "rezero";
  Model rezero(rz);
  CHECK_THAT(error_of([&] { load_params(rezero.params(), tensors, "ck.safetensors"); }), Contains("is missing"));

  // A 0-d tensor fills a shape-[1] parameter.
  ParamStore store;
  store.add("alpha", {1}, ParamRole::NormAlpha);
  CHECK(load_params(store, {{"alpha", "F64", {}, {2.5}}}, "s.safetensors").empty());
  CHECK(store.at("alpha")(0, 0) == 2.5);
}

TEST_CASE("load_weights: names and shapes that do not describe an encoder", "[io][load_weights]") {
  const auto tensors = model_tensors(small_config("post", false));
  CHECK_THAT(error_of([&] { checkpoint_sizes({{"encoder.layers.0.linear1.weight", "", {1, 1}, {1}}}, "e.safetensors"); }),
             Contains("'e.safetensors'") && Contains("no tensor is named layers.{i}.*") && Contains("encoder."));
  CHECK_THAT(error_of([&] { checkpoint_sizes(without(tensors, "layers.0.self_attn.in_proj_weight"), "e.safetensors"); }),
             Contains("'layers.0.self_attn.in_proj_weight' is missing"));
  auto bad = tensors;
  for (auto& t : bad)
    if (t.name == "layers.0.self_attn.in_proj_weight") t.shape = {8, 24};
  CHECK_THAT(error_of([&] { checkpoint_sizes(bad, "e.safetensors"); }),
             Contains("'layers.0.self_attn.in_proj_weight' has shape [8, 24] but must be [24, 8]") &&
                 Contains("it looks transposed"));
}

TEST_CASE("load_weights: explicit size options that contradict the file name both values", "[io][load_weights]") {
  const CheckpointSizes s = checkpoint_sizes(model_tensors(small_config("post", true)), "ck.safetensors");
  ModelConfig cfg;
  GivenSizes g;
  g.layers = 4;
  CHECK_THAT(error_of([&] { apply_checkpoint_sizes(s, g, "ck.safetensors", cfg); }),
             Contains("--layers 4 contradicts the number of layers 2") && Contains("'ck.safetensors'"));
  g = GivenSizes{};
  g.d_model = 16;
  CHECK_THAT(error_of([&] { apply_checkpoint_sizes(s, g, "ck.safetensors", cfg); }),
             Contains("--d-model 16 contradicts d_model 8"));
  g = GivenSizes{};
  g.d_ff = 32;
  CHECK_THAT(error_of([&] { apply_checkpoint_sizes(s, g, "ck.safetensors", cfg); }),
             Contains("--d-ff 32 contradicts d_ff 12"));
  g = GivenSizes{};
  g.final_norm = false;
  CHECK_THAT(error_of([&] { apply_checkpoint_sizes(s, g, "ck.safetensors", cfg); }),
             Contains("--no-final-norm contradicts the final norm"));
}

TEST_CASE("run inputs: --weights, --input and --cotangent replace the seeded model and draws", "[io][load_weights]") {
  TempDir dir;
  const ModelConfig c = small_config("pre", false);
  const auto tensors = model_tensors(c);
  RunConfig rc;
  rc.model.placement = "pre";
  rc.model.heads = 2;
  rc.weights = dir.file("w.safetensors");
  rc.input = dir.file("x.npy");
  rc.cotangent = dir.file("g.npy");
  write_safetensors(rc.weights, tensors);
  const Mat x = random_normal(11, "x", 3, 8), g = random_normal(11, "g", 3, 8);
  write_npy(rc.input, x.data(), {1, 3, 8});  // (1, n, d) like a batch of one
  write_npy(rc.cotangent, g);

  GivenSizes given;
  given.seq_len = 5;
  CHECK_THAT(error_of([&] { RunConfig r = rc; apply_file_sizes(r, given); }),
             Contains("--seq-len 5 contradicts the 3 tokens of --input"));
  apply_file_sizes(rc, GivenSizes{});
  CHECK(rc.analysis.seq_len == 3);
  CHECK(rc.model.layers == 2);
  CHECK(rc.model.final_norm == std::optional<bool>(false));
  Model m(rc.model);
  const RunInputs in = prepare_run(rc, m);
  CHECK(in.x0 == x);
  REQUIRE(in.cotangent_or_null() != nullptr);
  CHECK(*in.cotangent_or_null() == g);
  for (const auto& t : tensors)
    if (t.name == "layers.1.linear1.weight") CHECK(m.params().at(t.name) == ConstMatMap(t.data.data(), 12, 8));

  // Wrong shapes of the data files, and a cotangent without --loss dot. A RunConfig keeps the files as first read
  // (rc.files: compare and sweep read them once), so the rewritten files are read again only without it.
  CHECK(load_run_files(rc) == rc.files);
  write_npy(rc.cotangent, random_normal(1, "g", 4, 8));
  rc.files.reset();
  CHECK_THAT(error_of([&] { Model m2(rc.model); prepare_run(rc, m2); }),
             Contains("'" + rc.cotangent + "'") && Contains("--cotangent") && Contains("(4, 8)"));
  write_npy(rc.input, random_normal(1, "x", 3, 6));
  rc.files.reset();
  CHECK_THAT(error_of([&] { RunConfig r = rc; apply_file_sizes(r, GivenSizes{}); }),
             Contains("'" + rc.input + "'") && Contains("width d = 6 but d_model is 8"));
  RunConfig sq = rc;
  sq.analysis.loss = "half-sq";
  CHECK_THAT(error_of([&] { apply_file_sizes(sq, GivenSizes{}); }), Contains("--cotangent gives the g of --loss dot"));
}

TEST_CASE("run inputs: without --weights, --input alone fixes n and d", "[io][load_weights]") {
  TempDir dir;
  RunConfig rc;
  rc.model.heads = 2;
  rc.input = dir.file("x.npy");
  write_npy(rc.input, random_normal(2, "x", 4, 6));
  apply_file_sizes(rc, GivenSizes{});
  CHECK(rc.analysis.seq_len == 4);
  CHECK(rc.model.d_model == 6);
  GivenSizes d;
  d.d_model = 8;
  RunConfig r2 = rc;
  r2.model.d_model = 8;
  CHECK_THAT(error_of([&] { apply_file_sizes(r2, d); }), Contains("(from --d-model)"));
}
