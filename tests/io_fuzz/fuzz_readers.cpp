// fuzz_readers.cpp — robustness test of read_npy, read_safetensors and read_checkpoint (standalone, no Catch2).
// From a few valid files built in memory, a fixed-seed generator makes mutated variants (bit flips,
// byte sets, inserted/deleted/duplicated ranges, header-length edits, header text edits) plus every
// truncation; each must load cleanly (and then satisfy the reader's invariants) or throw
// gradflow::Error. Any other exception, a broken invariant, or a sanitizer report fails the run.
// Usage: fuzz_readers [cases_per_format=3000] [seed=20240611]
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "gradflow/core/error.hpp"
#include "gradflow/io/checkpoint.hpp"
#include "gradflow/io/npy.hpp"
#include "gradflow/io/safetensors.hpp"

using namespace gradflow;

namespace {

// splitmix64: a fixed, platform-independent stream (std distributions differ between libraries).
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(next() % n); }
};

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) {
    std::fprintf(stderr, "fuzz_readers: cannot write %s\n", path.c_str());
    std::exit(2);
  }
}

std::string le(uint64_t v, int n) {
  std::string s;
  for (int b = 0; b < n; ++b) s += static_cast<char>((v >> (8 * b)) & 0xFF);
  return s;
}

// ---- valid seed files --------------------------------------------------------------------------

std::vector<std::string> npy_seeds(const std::string& dir) {
  std::vector<std::string> seeds;
  const std::string p = dir + "/seed.npy";
  const std::vector<double> v{1.5, -2.0, 0.1, 1e-300, -0.0, 3.0, 7.25, 1e300, -5.5, 2.0, 4.0, 8.0};
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{3, 4}, {1, 2, 6}, {12}, {}, {0, 5}}) {
    write_npy(p, v.data(), shape);
    seeds.push_back(read_all(p));
  }
  // float32, format 2.0, numpy's own padding style.
  std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
  while ((12 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string f4 = std::string("\x93NUMPY\x02\x00", 8) + le(h.size(), 4) + h;
  for (float x : {1.0f, -0.5f, 0.25f, 3.0f}) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    f4 += le(u, 4);
  }
  seeds.push_back(f4);
  return seeds;
}

std::vector<std::string> safetensors_seeds(const std::string& dir) {
  std::vector<std::string> seeds;
  const std::string p = dir + "/seed.safetensors";
  write_safetensors(p, {{"layers.0.linear1.weight", "", {2, 3}, {1, 2, 3, 4, 5, 6}},
                        {"layers.0.linear1.bias", "", {3}, {0.5, -0.5, 0.25}},
                        {"scalar", "", {}, {9.0}}});
  seeds.push_back(read_all(p));
  write_safetensors(p, {{"e", "", {0, 3}, {}}, {"w", "", {1, 2}, {1e-300, -1e300}}});
  seeds.push_back(read_all(p));
  // Mixed dtypes, names out of offset order, metadata last.
  const std::string header =
      R"({"z":{"dtype":"BF16","shape":[2],"data_offsets":[24,28]},"a":{"dtype":"F16","shape":[2,2],"data_offsets":[16,24]},)"
      R"("m":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},"b":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},)"
      R"("__metadata__":{"format":"pt"}})";
  std::string data = le(0x3FB999999999999Aull, 8) + le(0x3DCCCCCDu, 4) + le(0xC0600000u, 4) + le(0x3555, 2) +
                     le(0x0001, 2) + le(0x8000, 2) + le(0x7BFF, 2) + le(0x3EAB, 2) + le(0x0001, 2);
  seeds.push_back(le(header.size(), 8) + header + data);
  return seeds;
}

// ---- mutations --------------------------------------------------------------------------------

const std::vector<std::string> kTokens = {
    "F64", "F32", "F16", "BF16", "I64", "U8", "dtype", "shape", "data_offsets", "__metadata__", "[", "]", "{", "}", ",",
    ":", "\"", "'", "(", ")", "<f8", "<f4", ">f8", "|u1", "True", "False", "descr", "fortran_order", "0", "1", "9",
    "-1", "18446744073709551615", "4294967296", "1e999", "2.5", "null", "\\u0000", "\\", "\n", " ", ""};

// Replaces one occurrence of a known token in `s` by another token.
void edit_token(std::string& s, Rng& rng) {
  const std::string& from = kTokens[rng.below(kTokens.size() - 1)];  // never search for ""
  std::vector<size_t> at;
  for (size_t pos = s.find(from); pos != std::string::npos && at.size() < 64; pos = s.find(from, pos + 1)) at.push_back(pos);
  const std::string& to = kTokens[rng.below(kTokens.size())];
  if (at.empty()) {
    s.insert(rng.below(s.size() + 1), to);
    return;
  }
  s.replace(at[rng.below(at.size())], from.size(), to);
}

// Edits a digit run: another digit, a minus sign, or many more digits.
void edit_number(std::string& s, Rng& rng) {
  std::vector<size_t> digits;
  for (size_t i = 0; i < s.size() && i < 4096; ++i)
    if (s[i] >= '0' && s[i] <= '9') digits.push_back(i);
  if (digits.empty()) return;
  const size_t i = digits[rng.below(digits.size())];
  switch (rng.below(4)) {
    case 0: s[i] = static_cast<char>('0' + rng.below(10)); break;
    case 1: s.insert(i, "-"); break;
    case 2: s.insert(i, std::string(1 + rng.below(25), static_cast<char>('1' + rng.below(9)))); break;
    default: s.erase(i, 1); break;
  }
}

// Sets the header-length field (u64 at 0 for safetensors; u16/u32 at 8 for .npy) or .npy's version.
void edit_length(std::string& s, Rng& rng, bool npy) {
  const size_t pos = npy ? 8 : 0;
  const int width = npy ? ((s.size() > 6 && s[6] == '\x01') ? 2 : 4) : 8;
  if (s.size() < pos + static_cast<size_t>(width)) return;
  uint64_t cur = 0;
  for (int b = width - 1; b >= 0; --b) cur = cur << 8 | static_cast<unsigned char>(s[pos + static_cast<size_t>(b)]);
  uint64_t v;
  switch (rng.below(7)) {
    case 0: v = cur + 1 + rng.below(16); break;
    case 1: v = cur - 1 - rng.below(16); break;
    case 2: v = 0; break;
    case 3: v = ~uint64_t{0}; break;
    case 4: v = uint64_t{1} << rng.below(64); break;
    case 5: v = s.size() - pos - static_cast<size_t>(width) + rng.below(3); break;
    default: v = rng.next(); break;
  }
  if (npy && rng.below(4) == 0) {  // or the version bytes
    s[6] = static_cast<char>(rng.below(5));
    s[7] = static_cast<char>(rng.below(2));
    return;
  }
  s.replace(pos, static_cast<size_t>(width), le(v, width));
}

std::string mutate(const std::string& seed, Rng& rng, bool npy) {
  std::string s = seed;
  const size_t rounds = 1 + rng.below(3);
  for (size_t r = 0; r < rounds; ++r) {
    const size_t n = s.size();
    switch (rng.below(9)) {
      case 0:  // bit flips
        for (size_t k = 1 + rng.below(4); k > 0 && n > 0; --k) s[rng.below(n)] ^= static_cast<char>(1u << rng.below(8));
        break;
      case 1:  // a byte set to an interesting or random value
        if (n > 0) {
          static const char kBytes[] = {'\0', '\xFF', '\x7F', '\x80', '{', '}', '"', ',', '-', '9', ' ', '\n'};
          s[rng.below(n)] = rng.below(2) ? kBytes[rng.below(sizeof kBytes)] : static_cast<char>(rng.below(256));
        }
        break;
      case 2: {  // insert random bytes
        std::string ins;
        for (size_t k = 1 + rng.below(16); k > 0; --k) ins += static_cast<char>(rng.below(256));
        s.insert(rng.below(n + 1), ins);
        break;
      }
      case 3:  // delete a range
        if (n > 0) {
          const size_t at = rng.below(n);
          s.erase(at, 1 + rng.below(std::min<size_t>(32, n - at)));
        }
        break;
      case 4:  // duplicate a range elsewhere
        if (n > 0) {
          const size_t at = rng.below(n);
          const std::string piece = s.substr(at, 1 + rng.below(std::min<size_t>(24, n - at)));
          s.insert(rng.below(n + 1), piece);
        }
        break;
      case 5: s.resize(rng.below(n + 1)); break;  // truncate
      case 6: edit_length(s, rng, npy); break;
      case 7: edit_token(s, rng); break;
      default: edit_number(s, rng); break;
    }
  }
  return s;
}

// ---- running the readers ----------------------------------------------------------------------

struct Tally {
  int loaded = 0, rejected = 0, failures = 0;
};

// Loads must satisfy the documented invariants; returns "" when they hold.
std::string check_npy(const NpyArray& a) {
  uint64_t n = 1;
  for (int64_t d : a.shape) {
    if (d < 0) return "negative dimension";
    n *= static_cast<uint64_t>(d);
  }
  if (n != a.data.size()) return "data size != product(shape)";
  if (a.descr != "<f8" && a.descr != "<f4") return "unexpected descr";
  for (double v : a.data)
    if (!std::isfinite(v)) return "non-finite value loaded";
  return "";
}

std::string check_safetensors(const std::vector<SafeTensor>& ts) {
  std::set<std::string> names;
  for (const SafeTensor& t : ts) {
    if (!names.insert(t.name).second) return "duplicate name '" + t.name + "'";
    if (t.dtype != "F64" && t.dtype != "F32" && t.dtype != "F16" && t.dtype != "BF16") return "unexpected dtype";
    uint64_t n = 1;
    for (int64_t d : t.shape) {
      if (d < 0) return "negative dimension";
      n *= static_cast<uint64_t>(d);
    }
    if (n != t.data.size()) return "data size != product(shape) for '" + t.name + "'";
    for (double v : t.data)
      if (!std::isfinite(v)) return "non-finite value loaded";
  }
  return "";
}

void run_case(const std::string& path, const std::string& bytes, bool npy, const std::string& label, Tally& tally) {
  write_all(path, bytes);
  std::string problem;
  try {
    problem = npy ? check_npy(read_npy(path)) : check_safetensors(read_safetensors(path));
    if (problem.empty()) {
      ++tally.loaded;
      return;
    }
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.rfind("cannot read", 0) == 0) problem = "harness could not read its own file: " + msg;
    else if (msg.find(path) == std::string::npos) problem = "error message does not name the file: " + msg;
    else if (msg.find('\n') != std::string::npos) problem = "error message spans lines: " + msg;
    else {
      ++tally.rejected;
      return;
    }
  } catch (const std::exception& e) {
    problem = std::string("non-gradflow exception: ") + e.what();
  } catch (...) {
    problem = "unknown exception";
  }
  ++tally.failures;
  const std::string keep = path + ".fail" + std::to_string(tally.failures);
  write_all(keep, bytes);
  std::fprintf(stderr, "FAIL %s: %s (input kept in %s)\n", label.c_str(), problem.c_str(), keep.c_str());
}

Tally run_format(const std::string& dir, const std::vector<std::string>& seeds, bool npy, int cases, Rng& rng,
                 int& truncations) {
  Tally tally;
  const std::string path = dir + (npy ? "/case.npy" : "/case.safetensors");
  const char* fmt = npy ? "npy" : "safetensors";
  for (size_t s = 0; s < seeds.size(); ++s) {  // every seed loads as is
    Tally one;
    run_case(path, seeds[s], npy, std::string(fmt) + " seed " + std::to_string(s), one);
    if (one.loaded != 1) {
      std::fprintf(stderr, "FAIL %s seed %zu does not load\n", fmt, s);
      ++tally.failures;
    }
  }
  truncations = 0;
  for (size_t s = 0; s < seeds.size(); ++s)  // every proper prefix of every seed
    for (size_t len = 0; len < seeds[s].size(); ++len, ++truncations)
      run_case(path, seeds[s].substr(0, len), npy, std::string(fmt) + " seed " + std::to_string(s) + " cut at " + std::to_string(len), tally);
  for (int c = 0; c < cases; ++c)
    run_case(path, mutate(seeds[rng.below(seeds.size())], rng, npy), npy, std::string(fmt) + " case " + std::to_string(c), tally);
  return tally;
}

// ---- Hugging Face checkpoints: a folder with config.json and model.safetensors ---------------------------------
// Each case mutates either the safetensors file or the config.json text of a valid GPT-2 or BERT folder; the
// checkpoint reader and apply_checkpoint must load it (tensors then in gradflow's names, sizes consistent) or throw
// a one-line gradflow::Error naming the folder's files.

struct HfSeed {
  std::string config, weights;
};

std::vector<HfSeed> hf_seeds(const std::string& dir) {
  const std::string p = dir + "/hf_seed.safetensors";
  auto vec = [](size_t n, double base) {
    std::vector<double> v(n);
    for (size_t k = 0; k < n; ++k) v[k] = base + 0.01 * static_cast<double>(k);
    return v;
  };
  std::vector<SafeTensor> g = {{"transformer.wte.weight", "", {3, 4}, vec(12, 0)},
                               {"transformer.ln_f.weight", "", {4}, vec(4, 1)},
                               {"transformer.ln_f.bias", "", {4}, vec(4, 0)}};
  const std::vector<std::pair<std::string, std::vector<int64_t>>> gpt2_block = {
      {"ln_1.weight", {4}}, {"ln_1.bias", {4}}, {"attn.c_attn.weight", {4, 12}}, {"attn.c_attn.bias", {12}},
      {"attn.c_proj.weight", {4, 4}}, {"attn.c_proj.bias", {4}}, {"ln_2.weight", {4}}, {"ln_2.bias", {4}},
      {"mlp.c_fc.weight", {4, 8}}, {"mlp.c_fc.bias", {8}}, {"mlp.c_proj.weight", {8, 4}}, {"mlp.c_proj.bias", {4}},
      {"attn.bias", {1, 1, 2, 2}}};
  for (const auto& [name, shape] : gpt2_block) {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    g.push_back({"transformer.h.0." + name, "", shape, vec(n, 0.5)});
  }
  write_safetensors(p, g);
  std::vector<HfSeed> seeds;
  seeds.push_back({R"({"model_type": "gpt2", "n_embd": 4, "n_head": 2, "n_layer": 1, "n_inner": 8,)"
                   R"( "activation_function": "gelu_new", "layer_norm_epsilon": 1e-05})",
                   read_all(p)});
  std::vector<SafeTensor> b = {{"bert.embeddings.word_embeddings.weight", "", {3, 4}, vec(12, 0)}};
  const std::vector<std::pair<std::string, std::vector<int64_t>>> bert_layer = {
      {"attention.self.query.weight", {4, 4}}, {"attention.self.query.bias", {4}},
      {"attention.self.key.weight", {4, 4}}, {"attention.self.key.bias", {4}},
      {"attention.self.value.weight", {4, 4}}, {"attention.self.value.bias", {4}},
      {"attention.output.dense.weight", {4, 4}}, {"attention.output.dense.bias", {4}},
      {"attention.output.LayerNorm.gamma", {4}}, {"attention.output.LayerNorm.beta", {4}},
      {"intermediate.dense.weight", {8, 4}}, {"intermediate.dense.bias", {8}}, {"output.dense.weight", {4, 8}},
      {"output.dense.bias", {4}}, {"output.LayerNorm.weight", {4}}, {"output.LayerNorm.bias", {4}}};
  for (const auto& [name, shape] : bert_layer) {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    b.push_back({"bert.encoder.layer.0." + name, "", shape, vec(n, 0.25)});
  }
  write_safetensors(p, b);
  seeds.push_back({R"({"model_type": "bert", "hidden_size": 4, "num_attention_heads": 1, "num_hidden_layers": 1,)"
                   R"( "intermediate_size": 8, "hidden_act": "gelu", "layer_norm_eps": 1e-12})",
                   read_all(p)});
  return seeds;
}

Tally run_hf(const std::string& dir, int cases, Rng& rng) {
  Tally tally;
  const std::string folder = dir + "/hf";
  std::filesystem::create_directory(folder);
  const std::vector<HfSeed> seeds = hf_seeds(dir);
  for (int c = -static_cast<int>(seeds.size()); c < cases; ++c) {  // the seeds as they are first
    const HfSeed& seed = seeds[c < 0 ? static_cast<size_t>(c + static_cast<int>(seeds.size())) : rng.below(seeds.size())];
    HfSeed cur = seed;
    if (c >= 0) {
      if (rng.below(2) == 0) cur.weights = mutate(seed.weights, rng, false);
      else
        for (size_t r = 1 + rng.below(3); r > 0; --r) rng.below(2) ? edit_token(cur.config, rng) : edit_number(cur.config, rng);
    }
    write_all(folder + "/config.json", cur.config);
    write_all(folder + "/model.safetensors", cur.weights);
    std::string problem;
    bool loaded = false;
    try {
      const Checkpoint ck = read_checkpoint(folder);
      ModelConfig cfg;
      apply_checkpoint(ck, GivenSizes{}, GivenArch{}, cfg);
      for (const SafeTensor& t : ck.tensors)
        if (t.name.rfind("layers.", 0) != 0 && t.name.rfind("norm.", 0) != 0) problem = "tensor not in gradflow's names: " + t.name;
      if (problem.empty()) problem = check_safetensors(ck.tensors);
      loaded = problem.empty();
    } catch (const Error& e) {
      const std::string msg = e.what();
      if (msg.find(folder) == std::string::npos) problem = "error message does not name the folder: " + msg;
      else if (msg.find('\n') != std::string::npos) problem = "error message spans lines: " + msg;
    } catch (const std::exception& e) {
      problem = std::string("non-gradflow exception: ") + e.what();
    } catch (...) {
      problem = "unknown exception";
    }
    if (c < 0 && !loaded) problem = "seed does not load: " + problem;
    if (problem.empty()) {
      ++(loaded ? tally.loaded : tally.rejected);
      continue;
    }
    ++tally.failures;
    const std::string keep = folder + ".fail" + std::to_string(tally.failures);
    write_all(keep + ".config.json", cur.config);
    write_all(keep + ".safetensors", cur.weights);
    std::fprintf(stderr, "FAIL hf case %d: %s (inputs kept as %s.*)\n", c, problem.c_str(), keep.c_str());
  }
  return tally;
}

}  // namespace

int main(int argc, char** argv) {
  const int cases = argc > 1 ? std::atoi(argv[1]) : 3000;
  const uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 20240611ull;
  std::string dir = (std::filesystem::temp_directory_path() / "gradflow_fuzz_XXXXXX").string();
  if (::mkdtemp(&dir[0]) == nullptr) {
    std::perror("fuzz_readers: mkdtemp");
    return 2;
  }
  Rng rng{seed};
  int failures = 0;
  for (bool npy : {true, false}) {
    int truncations = 0;
    const std::vector<std::string> seeds = npy ? npy_seeds(dir) : safetensors_seeds(dir);
    const Tally t = run_format(dir, seeds, npy, cases, rng, truncations);
    std::printf("%-12s %zu seeds, %d mutated + %d truncated files: %d loaded, %d rejected with gradflow::Error, %d failures\n",
                npy ? "npy:" : "safetensors:", seeds.size(), cases, truncations, t.loaded, t.rejected, t.failures);
    failures += t.failures;
  }
  const Tally hf = run_hf(dir, cases / 3, rng);
  std::printf("%-12s 2 seeds (GPT-2, BERT folders), %d mutated: %d loaded, %d rejected with gradflow::Error, %d failures\n",
              "hf folders:", cases / 3, hf.loaded, hf.rejected, hf.failures);
  failures += hf.failures;
  if (failures == 0) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  } else {
    std::printf("failing inputs kept in %s\n", dir.c_str());
  }
  std::printf("%s (seed %llu)\n", failures == 0 ? "PASS" : "FAIL", static_cast<unsigned long long>(seed));
  return failures == 0 ? 0 : 1;
}
