// test_analyze_over_training.cpp — `analyze --weights A B C …` (src/commands/analyze_over_training.cpp): the step
// a name gives, the checkpoints a list, a folder or a glob names (in step order, with the x_0 train saved beside
// them), the refusals (no step, the same step twice, nothing named), and the report: each checkpoint's report the
// plain analyze of it on the same input, bit for bit; another architecture refused by name.
#include <catch2/catch.hpp>

#include <filesystem>

#include "../io/temp_dir.hpp"
#include "gradflow/commands/analyze_over_training.hpp"
#include "gradflow/io/npy.hpp"
#include "gradflow/io/safetensors.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/model/model.hpp"

using namespace gradflow;
using Catch::Matchers::Contains;
using test::error_of;
using test::TempDir;

namespace {

ModelConfig small(Index layers = 2) {
  ModelConfig c;
  c.layers = layers;
  c.d_model = 8;
  c.heads = 2;
  c.placement = "pre";
  c.causal = true;
  return c;
}

// A torch-encoder checkpoint of `cfg` drawn from `seed`, as train --save-every writes it (with its .input.npy).
void write_checkpoint(const std::string& base, const ModelConfig& cfg, uint64_t seed, bool input = true) {
  Model m(cfg);
  InitConfig init;
  init.seed = seed;
  initialize(m, init);
  write_safetensors(base + ".safetensors", to_tensors(m.params()));
  if (input) write_npy(base + ".input.npy", Mat::Constant(3, cfg.d_model, 0.5));
}

AnalyzeRequest request() {
  AnalyzeRequest r;
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"placement", "pre"}, {"heads", "2"}, {"causal", "true"}})
    set_model_option(r.model, k, v);
  r.gradients_only = true;
  r.quiet = true;
  return r;
}

}  // namespace

TEST_CASE("step_of: the digits after 'step' in the last component of the name", "[commands][over_training]") {
  CHECK(step_of("ck/step_000100.safetensors") == 100);
  CHECK(step_of("runs/pythia/step143000") == 143000);
  CHECK(step_of("runs/pythia/step143000/") == 143000);
  CHECK(step_of("out/global_step20") == 20);
  CHECK(step_of("a/step-7.safetensors.index.json") == 7);
  CHECK(step_of("step_12/model.safetensors") == -1);  // the file's own name says nothing
  CHECK(step_of("final.safetensors") == -1);
  CHECK(step_of("stepper") == -1);
  // up to 15 significant digits, exactly (a report's number holds them); more is refused, never cut
  CHECK(step_of("step_999999999999999") == 999999999999999LL);
  CHECK(step_of("step_0000000000999999999999999.safetensors") == 999999999999999LL);  // padding is not a digit
  CHECK_THAT(error_of([] { step_of("ck/step_99999999999999999999"); }),
             Contains("its step number has 20 digits, more than the 15 a report holds exactly"));
  CHECK_THAT(error_of([] { step_of("step_1000000000000000"); }), Contains("has 16 digits"));
}

TEST_CASE("training checkpoints: a folder, a glob or a list, in step order, with train's saved x_0",
          "[commands][over_training]") {
  TempDir dir;
  namespace fs = std::filesystem;
  const std::string ck = dir.file("ck");
  fs::create_directory(ck);
  for (const auto& [step, seed] : std::vector<std::pair<int, int>>{{20, 1}, {5, 2}, {100, 3}}) {
    char name[32];
    std::snprintf(name, sizeof name, "/step_%06d", step);
    write_checkpoint(ck + name, small(), seed);
  }
  test::write_bytes(ck + "/notes.txt", "not a checkpoint");
  const auto folder = training_checkpoints({ck});
  REQUIRE(folder.size() == 3);
  CHECK(folder[0].step == 5);
  CHECK(folder[1].step == 20);
  CHECK(folder[2].step == 100);
  CHECK(folder[0].input == ck + "/step_000005.input.npy");
  const auto glob = training_checkpoints({ck + "/step_*.safetensors"});
  REQUIRE(glob.size() == 3);
  for (size_t i = 0; i < 3; ++i) CHECK(glob[i].path == folder[i].path);
  const auto list = training_checkpoints({ck + "/step_000100.safetensors", ck + "/step_000005.safetensors"});
  REQUIRE(list.size() == 2);
  CHECK(list[0].step == 5);
  CHECK(names_training_checkpoints({ck}));
  CHECK(names_training_checkpoints({ck + "/step_*.safetensors"}));
  CHECK_FALSE(names_training_checkpoints({ck + "/step_000005.safetensors"}));
  CHECK(names_training_checkpoints({ck + "/step_000005.safetensors", ck + "/step_000020.safetensors"}));

  CHECK_THAT(error_of([&] { training_checkpoints({ck + "/step_000005.safetensors", ck + "/step_000005.safetensors"}); }),
             Contains("are both step 5; fix: name each checkpoint once"));
  write_checkpoint(dir.file("final"), small(), 4);
  CHECK_THAT(error_of([&] { training_checkpoints({dir.file("final.safetensors"), ck + "/step_000005.safetensors"}); }),
             Contains("its name gives no training step, which orders the 2 checkpoints"));
  CHECK(training_checkpoints({dir.file("final.safetensors")}).size() == 1);  // one checkpoint needs no step
  CHECK_THAT(error_of([&] { training_checkpoints({ck + "/nothing_*.safetensors"}); }), Contains("matches no file"));
  fs::create_directory(dir.file("empty"));
  CHECK_THAT(error_of([&] { training_checkpoints({dir.file("empty")}); }),
             Contains("is a folder with neither a checkpoint (config.json, model.safetensors) nor step-named "
                      "checkpoints inside"));
  CHECK_THAT(error_of([&] { training_checkpoints({ck + "/notes.txt"}); }), Contains("is not a checkpoint"));

  // a step-named entry of the folder that is no checkpoint is refused by name, never dropped
  fs::create_symlink("step_000200.safetensors", ck + "/step_000200.safetensors");  // points at itself
  CHECK_THAT(error_of([&] { training_checkpoints({ck}); }), Contains("'step_000200.safetensors' is a symbolic link loop"));
  fs::remove(ck + "/step_000200.safetensors");
  fs::create_symlink("gone.safetensors", ck + "/step_000300.safetensors");
  CHECK_THAT(error_of([&] { training_checkpoints({ck}); }), Contains("'step_000300.safetensors' is a link to nothing"));
  fs::remove(ck + "/step_000300.safetensors");
  fs::create_directory_symlink("..", ck + "/step400");
  CHECK_THAT(error_of([&] { training_checkpoints({ck}); }),
             Contains("'step400' is step-named but not a checkpoint folder"));
  fs::remove(ck + "/step400");
  CHECK(training_checkpoints({ck}).size() == 3);
}

TEST_CASE("over training: each checkpoint's report is analyze's on the first checkpoint's saved x_0 / another "
          "architecture refused", "[commands][over_training]") {
  TempDir dir;
  write_checkpoint(dir.file("step_000010"), small(), 11);
  write_checkpoint(dir.file("step_000020"), small(), 12, false);  // no x_0 of its own: the first's is used
  const auto cks = training_checkpoints({dir.file("step_*.safetensors")});
  const nlohmann::ordered_json over = run_analyze_over_training(request(), cks);
  REQUIRE(over["checkpoints"].size() == 2);
  CHECK(over["over_training"]["steps"] == nlohmann::ordered_json::array({10, 20}));
  CHECK_THAT(over["over_training"]["input"].get<std::string>(), Contains("step_000010.input.npy"));
  for (size_t i = 0; i < 2; ++i) {
    AnalyzeRequest one = request();
    set_model_option(one.model, "weights", cks[i].path);
    set_model_option(one.model, "input", dir.file("step_000010.input.npy"));
    const nlohmann::ordered_json alone = run_analyze_request(one);
    const auto& got = over["checkpoints"][i]["report"];
    CHECK(over["checkpoints"][i]["step"] == cks[i].step);
    CHECK(got["loss"] == alone["loss"]);
    CHECK(got["layers"].size() == 2);
    for (size_t l = 0; l < 2; ++l) CHECK(got["layers"][l]["grad_norm"] == alone["layers"][l]["grad_norm"]);
  }
  CHECK(over["checkpoints"][0]["report"]["loss"] != over["checkpoints"][1]["report"]["loss"]);  // other weights

  write_checkpoint(dir.file("step_000030"), small(3), 13, false);
  const auto three = training_checkpoints({dir.file("step_*.safetensors")});
  CHECK_THAT(error_of([&] { run_analyze_over_training(request(), three); }),
             Contains("(step 30) is another architecture than '" + dir.file("step_000010.safetensors") +
                      "': its layers is 3, not 2"));
}
