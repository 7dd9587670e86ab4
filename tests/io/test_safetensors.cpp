// test_safetensors.cpp — safetensors reader/writer: round trips, F32/F16/BF16 exactness, the writer's
// header bytes, ParamStore export, and every rejected case (gradflow::Error naming file and problem).
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "gradflow/io/safetensors.hpp"
#include "temp_dir.hpp"

using namespace gradflow;
using Catch::Matchers::Contains;
using test::error_of;
using test::f32_bytes;
using test::f64_bytes;
using test::le_bytes;
using test::TempDir;
using test::write_bytes;

namespace {

std::string st_bytes(const std::string& header, const std::string& data) {
  return le_bytes(header.size(), 8) + header + data;
}

std::string u16_bytes(uint16_t v) { return le_bytes(v, 2); }

bool same_bits(double a, double b) { return std::memcmp(&a, &b, 8) == 0; }

}  // namespace

TEST_CASE("safetensors: F64 round trip keeps names, shapes, order and bits", "[io][safetensors]") {
  TempDir dir;
  const std::vector<SafeTensor> in = {
      {"layers.0.linear1.weight", "", {2, 3}, {1.5, -2.0, 0.1, 1e-300, -0.0, std::numeric_limits<double>::denorm_min()}},
      {"layers.0.linear1.bias", "", {3}, {1, 2, 3}},
      {"empty", "", {0, 4}, {}},
      {"scalar", "", {}, {42.0}},
  };
  const std::string path = dir.file("ckpt.safetensors");
  write_safetensors(path, in);
  const std::vector<SafeTensor> out = read_safetensors(path);
  REQUIRE(out.size() == in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    INFO(in[i].name);
    CHECK(out[i].name == in[i].name);  // file order = the order written
    CHECK(out[i].dtype == "F64");
    CHECK(out[i].shape == in[i].shape);
    REQUIRE(out[i].data.size() == in[i].data.size());
    for (size_t k = 0; k < in[i].data.size(); ++k) CHECK(same_bits(out[i].data[k], in[i].data[k]));
  }
}

TEST_CASE("safetensors: writer header is compact JSON padded with spaces to 8 bytes", "[io][safetensors]") {
  TempDir dir;
  write_safetensors(dir.file("a.safetensors"), {{"a", "", {2}, {1.0, 2.0}}});
  const std::string b = test::read_bytes(dir.file("a.safetensors"));
  REQUIRE(b.size() >= 8);
  uint64_t n = 0;
  for (int k = 7; k >= 0; --k) n = n << 8 | static_cast<unsigned char>(b[static_cast<size_t>(k)]);
  CHECK(n % 8 == 0);
  REQUIRE(b.size() == 8 + n + 16);
  const std::string header = b.substr(8, n);
  const std::string json_text = R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F64","shape":[2],"data_offsets":[0,16]}})";
  CHECK(header == json_text + std::string((8 - json_text.size() % 8) % 8, ' '));
  const auto h = nlohmann::json::parse(header);  // valid JSON including the padding
  CHECK(h["a"]["data_offsets"] == nlohmann::json::array({0, 16}));
  CHECK(b.substr(8 + n) == f64_bytes(1.0) + f64_bytes(2.0));

  // Many tensors of odd name lengths: header always a multiple of 8, offsets contiguous in given order.
  std::vector<SafeTensor> many;
  for (int i = 0; i < 9; ++i) many.push_back({std::string(static_cast<size_t>(i + 1), 'x'), "", {i}, std::vector<double>(static_cast<size_t>(i), 0.5)});
  write_safetensors(dir.file("m.safetensors"), many);
  const std::string mb = test::read_bytes(dir.file("m.safetensors"));
  uint64_t mn = 0;
  for (int k = 7; k >= 0; --k) mn = mn << 8 | static_cast<unsigned char>(mb[static_cast<size_t>(k)]);
  CHECK(mn % 8 == 0);
  const auto mh = nlohmann::json::parse(mb.substr(8, mn));
  uint64_t off = 0;
  for (const SafeTensor& t : many) {
    CHECK(mh[t.name]["data_offsets"] == nlohmann::json::array({off, off + 8 * t.data.size()}));
    off += 8 * t.data.size();
  }
  CHECK(mb.size() == 8 + mn + off);

  // Empty checkpoint.
  write_safetensors(dir.file("e.safetensors"), {});
  CHECK(read_safetensors(dir.file("e.safetensors")).empty());
}

TEST_CASE("safetensors: F32, F16 and BF16 tensors convert exactly and come back in data-offset order", "[io][safetensors]") {
  TempDir dir;
  // Header lists names out of offset order on purpose.
  const std::string header =
      R"({"z.bf16":{"dtype":"BF16","shape":[2],"data_offsets":[24,28]},)"
      R"("a.f16":{"dtype":"F16","shape":[2,2],"data_offsets":[16,24]},)"
      R"("m.f32":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
      R"("__metadata__":{"format":"pt"},)"
      R"("b.f64":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}})";
  const std::string data = f64_bytes(0.1) + f32_bytes(0.1f) + f32_bytes(-3.5f) + u16_bytes(0x3555) +
                           u16_bytes(0x0001) + u16_bytes(0x8000) + u16_bytes(0x7BFF) + u16_bytes(0x3EAB) +
                           u16_bytes(0x0001);
  write_bytes(dir.file("mixed.safetensors"), st_bytes(header, data));
  const auto ts = read_safetensors(dir.file("mixed.safetensors"));
  REQUIRE(ts.size() == 4);
  CHECK(ts[0].name == "b.f64");
  CHECK(ts[1].name == "m.f32");
  CHECK(ts[2].name == "a.f16");
  CHECK(ts[3].name == "z.bf16");
  CHECK(ts[1].dtype == "F32");
  CHECK(ts[0].data == std::vector<double>{0.1});
  CHECK(ts[1].data == std::vector<double>{static_cast<double>(0.1f), -3.5});
  CHECK(ts[2].shape == std::vector<int64_t>{2, 2});
  CHECK(ts[2].data[0] == 0x1.554p-2);
  CHECK(ts[2].data[1] == 0x1p-24);
  CHECK((ts[2].data[2] == 0.0 && std::signbit(ts[2].data[2])));
  CHECK(ts[2].data[3] == 65504.0);
  CHECK(ts[3].data == std::vector<double>{0x1.56p-2, 0x1p-133});
}

TEST_CASE("safetensors: half and bfloat16 bit patterns convert exactly", "[io][safetensors]") {
  struct P {
    uint16_t bits;
    double value;
  };
  const double inf = std::numeric_limits<double>::infinity();
  for (const P& p : {P{0x0000, 0.0}, P{0x3C00, 1.0}, P{0xC000, -2.0}, P{0x7BFF, 65504.0}, P{0x0001, 0x1p-24},
                     P{0x8001, -0x1p-24}, P{0x03FF, 0x1.ff8p-15}, P{0x0400, 0x1p-14}, P{0x3555, 0x1.554p-2},
                     P{0x7C00, inf}, P{0xFC00, -inf}}) {
    INFO("half 0x" << std::hex << p.bits);
    CHECK(same_bits(half_to_double(p.bits), p.value));
  }
  CHECK(same_bits(half_to_double(0x8000), -0.0));
  CHECK(std::isnan(half_to_double(0x7E00)));
  CHECK(std::isnan(half_to_double(0x7C01)));
  CHECK(std::isnan(half_to_double(0xFFFF)));

  for (const P& p : {P{0x3F80, 1.0}, P{0xC000, -2.0}, P{0x0001, 0x1p-133}, P{0x007F, 0x1.fcp-127}, P{0x0080, 0x1p-126},
                     P{0x7F7F, 0x1.fep+127}, P{0x3EAB, 0x1.56p-2}, P{0x7F80, inf}, P{0xFF80, -inf}}) {
    INFO("bfloat16 0x" << std::hex << p.bits);
    CHECK(same_bits(bfloat16_to_double(p.bits), p.value));
  }
  CHECK(same_bits(bfloat16_to_double(0x8000), -0.0));
  CHECK(std::isnan(bfloat16_to_double(0x7FC0)));
  CHECK(std::isnan(bfloat16_to_double(0xFF81)));

#ifdef __FLT16_MAX__
  // Every one of the 65536 half patterns against the compiler's own _Float16.
  int mismatches = 0;
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const uint16_t bits = static_cast<uint16_t>(b);
    _Float16 h;
    std::memcpy(&h, &bits, 2);
    const double ref = static_cast<double>(h);
    const double got = half_to_double(bits);
    if (std::isnan(ref) ? !std::isnan(got) : !same_bits(got, ref)) ++mismatches;
  }
  CHECK(mismatches == 0);
#endif
  // Every bfloat16 pattern is the top half of a float32.
  int bf_mismatches = 0;
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const uint32_t f32 = b << 16;
    float f;
    std::memcpy(&f, &f32, 4);
    const double got = bfloat16_to_double(static_cast<uint16_t>(b));
    if (std::isnan(f) ? !std::isnan(got) : !same_bits(got, static_cast<double>(f))) ++bf_mismatches;
  }
  CHECK(bf_mismatches == 0);
}

TEST_CASE("safetensors: to_tensors exports a ParamStore with PyTorch shapes", "[io][safetensors]") {
  ParamStore store;
  store.add("linear.weight", {2, 3}, ParamRole::Linear1Weight);
  store.add("linear.bias", {3}, ParamRole::Linear1Bias);
  store.add("scale", {1}, ParamRole::Gate);
  store.at("linear.weight") << 1, 2, 3, 4, 5, 6;
  store.at("linear.bias") << 7, 8, 9;
  store.at("scale")(0, 0) = 0.5;
  const auto ts = to_tensors(store);
  REQUIRE(ts.size() == 3);
  CHECK(ts[0].name == "linear.weight");
  CHECK(ts[0].shape == std::vector<int64_t>{2, 3});
  CHECK(ts[0].data == std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(ts[1].shape == std::vector<int64_t>{3});
  CHECK(ts[2].shape == std::vector<int64_t>{1});
  TempDir dir;
  write_safetensors(dir.file("p.safetensors"), ts);
  const auto back = read_safetensors(dir.file("p.safetensors"));
  REQUIRE(back.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(back[i].name == ts[i].name);
    CHECK(back[i].data == ts[i].data);
  }
}

TEST_CASE("safetensors: every malformed file is rejected with the file, the tensor and the problem",
          "[io][safetensors]") {
  TempDir dir;
  const std::string path = dir.file("bad.safetensors");
  const std::string two = f64_bytes(1) + f64_bytes(2);
  auto one = [](const std::string& body) { return "{\"t\":{" + body + "}}"; };
  const std::string ok_t = R"("dtype":"F64","shape":[2],"data_offsets":[0,16])";
  std::string dims65 = "[1";
  for (int i = 1; i < 65; ++i) dims65 += ",1";
  dims65 += "]";
  struct Case {
    const char* what;
    std::string bytes;
    std::vector<std::string> expect;
  };
  const std::vector<Case> cases = {
      {"short file", "abc", {"file of 3 bytes is shorter than the 8-byte header length"}},
      {"empty file", "", {"file of 0 bytes"}},
      {"header past end", le_bytes(1000, 8) + "{}", {"header length 1000 runs past the end of the file (10 bytes)"}},
      {"header length 2^64-1", le_bytes(~uint64_t{0}, 8) + "{}", {"header length 18446744073709551615 runs past"}},
      {"empty header", le_bytes(0, 8), {"does not start with '{'"}},
      {"not JSON", st_bytes("{\"t\":", ""), {"header is not valid JSON"}},
      {"trailing garbage", st_bytes("{} x", ""), {"header is not valid JSON"}},
      {"not an object", st_bytes("[1, 2]  ", ""), {"not a JSON object"}},
      {"invalid UTF-8", st_bytes("{\"\xff\":{}}", ""), {"header is not valid JSON"}},
      {"too deep", st_bytes("{\"t\":[[[[[[[[[[1]]]]]]]]]]}", ""), {"nests deeper than 8 levels"}},
      {"duplicate key", st_bytes("{" + std::string("\"t\":{") + ok_t + "},\"t\":{" + ok_t + "}}", two),
       {"the key 't' twice"}},
      {"bad metadata", st_bytes("{\"__metadata__\":{\"a\":1}," + one(ok_t).substr(1), two),
       {"\"__metadata__\" is not an object of strings"}},
      {"entry not object", st_bytes("{\"t\":5}", ""), {"tensor 't': header entry is not an object"}},
      {"missing dtype", st_bytes(one(R"("shape":[2],"data_offsets":[0,16])"), two), {"tensor 't'", "no \"dtype\""}},
      {"missing shape", st_bytes(one(R"("dtype":"F64","data_offsets":[0,16])"), two), {"tensor 't'", "no \"shape\""}},
      {"missing offsets", st_bytes(one(R"("dtype":"F64","shape":[2])"), two), {"tensor 't'", "no \"data_offsets\""}},
      {"dtype not string", st_bytes(one(R"("dtype":8,"shape":[2],"data_offsets":[0,16])"), two),
       {"\"dtype\" is not a string"}},
      {"unsupported dtype", st_bytes(one(R"("dtype":"I64","shape":[2],"data_offsets":[0,16])"), two),
       {"tensor 't'", "dtype 'I64' is not supported"}},
      {"unknown dtype", st_bytes(one(R"("dtype":"Q7","shape":[2],"data_offsets":[0,16])"), two), {"dtype 'Q7'"}},
      {"shape not array", st_bytes(one(R"("dtype":"F64","shape":2,"data_offsets":[0,16])"), two),
       {"\"shape\" is not an array"}},
      {"negative shape", st_bytes(one(R"("dtype":"F64","shape":[-2],"data_offsets":[0,16])"), two),
       {"tensor 't'", "shape has a negative value -2"}},
      {"float shape", st_bytes(one(R"("dtype":"F64","shape":[2.0],"data_offsets":[0,16])"), two),
       {"shape has a non-integer value"}},
      {"too many dimensions", st_bytes(one(R"("dtype":"F64","shape":)" + dims65 + R"(,"data_offsets":[0,8])"), f64_bytes(1)),
       {"shape has more than 64 dimensions"}},
      {"shape overflow",
       st_bytes(one(R"("dtype":"F64","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,16])"), two),
       {"overflow"}},
      {"one offset", st_bytes(one(R"("dtype":"F64","shape":[2],"data_offsets":[16])"), two),
       {"\"data_offsets\" is not an array of two integers"}},
      {"offsets not array", st_bytes(one(R"("dtype":"F64","shape":[2],"data_offsets":"0-16")"), two),
       {"not an array of two integers"}},
      {"decreasing offsets", st_bytes(one(R"("dtype":"F64","shape":[2],"data_offsets":[16,0])"), two),
       {"data_offsets [16, 0] are not increasing"}},
      {"negative offset", st_bytes(one(R"("dtype":"F64","shape":[2],"data_offsets":[-8,8])"), two),
       {"data_offsets has a negative value"}},
      {"float offset", st_bytes(one(R"("dtype":"F64","shape":[2],"data_offsets":[0,16.5])"), two),
       {"data_offsets has a non-integer value"}},
      {"outside data", st_bytes(one(R"("dtype":"F64","shape":[3],"data_offsets":[0,24])"), two),
       {"data_offsets [0, 24] lie outside the data section of 16 bytes"}},
      {"huge offset", st_bytes(one(R"("dtype":"F64","shape":[2],"data_offsets":[18446744073709551600,18446744073709551615])"), two),
       {"lie outside the data section"}},
      {"byte count", st_bytes(one(R"("dtype":"F64","shape":[3],"data_offsets":[0,16])"), two),
       {"span 16 bytes but shape [3] of F64 needs 24"}},
      {"overlap",
       st_bytes(R"({"a":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},"b":{"dtype":"F64","shape":[2],"data_offsets":[8,24]}})",
                two + f64_bytes(3)),
       {"tensor 'b'", "overlaps tensor 'a'"}},
      {"gap",
       st_bytes(R"({"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},"b":{"dtype":"F64","shape":[1],"data_offsets":[16,24]}})",
                two + f64_bytes(3)),
       {"tensor 'b'", "8 unused bytes"}},
      {"trailing", st_bytes(one(ok_t), two + "12345678"), {"8 trailing bytes after the last tensor"}},
      {"NaN", st_bytes(R"({"w":{"dtype":"F64","shape":[2,2],"data_offsets":[0,32]}})", two + f64_bytes(3) + f64_bytes(std::nan(""))),
       {"tensor 'w'", "element 3 (index [1, 1]) is NaN"}},
      {"F32 -Inf", st_bytes(R"({"v":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", f32_bytes(1) + f32_bytes(-HUGE_VALF)),
       {"tensor 'v'", "element 1 (index [1]) is -Inf"}},
      {"F16 Inf", st_bytes(R"({"h":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", u16_bytes(0x7C00) + u16_bytes(0)),
       {"tensor 'h'", "element 0 (index [0]) is +Inf"}},
      {"BF16 NaN", st_bytes(R"({"g":{"dtype":"BF16","shape":[1,2],"data_offsets":[0,4]}})", u16_bytes(0) + u16_bytes(0x7FC1)),
       {"tensor 'g'", "element 1 (index [0, 1]) is NaN"}},
      {"control chars in name", st_bytes(R"({"a\nb":{"dtype":"X","shape":[],"data_offsets":[0,0]}})", ""),
       {"tensor 'a\\x0Ab'"}},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    write_bytes(path, c.bytes);
    const std::string msg = error_of([&] { read_safetensors(path); });
    INFO("message: " << msg);
    CHECK_THAT(msg, Contains("safetensors file '" + path + "': "));
    CHECK_THAT(msg, Contains("; fix: "));
    CHECK(msg.find('\n') == std::string::npos);
    for (const std::string& e : c.expect) CHECK_THAT(msg, Contains(e));
  }
  CHECK_THAT(error_of([&] { read_safetensors(dir.file("nope.safetensors")); }),
             Contains("cannot read '" + dir.file("nope.safetensors") + "'"));
}

TEST_CASE("safetensors: byte vectors from the reference implementation's tests are read", "[io][safetensors]") {
  TempDir dir;
  auto from = [](std::initializer_list<int> v) {
    std::string s;
    for (int b : v) s += static_cast<char>(b);
    return s;
  };
  // huggingface/safetensors tensor.rs test_serialization: "attn.0", F32, shape [1, 2, 3], values 0..5.
  write_bytes(dir.file("ref.safetensors"),
              from({64, 0, 0, 0, 0, 0, 0, 0, 123, 34, 97, 116, 116, 110, 46, 48, 34, 58, 123, 34, 100, 116, 121, 112,
                    101, 34, 58, 34, 70, 51, 50, 34, 44, 34, 115, 104, 97, 112, 101, 34, 58, 91, 49, 44, 50, 44, 51,
                    93, 44, 34, 100, 97, 116, 97, 95, 111, 102, 102, 115, 101, 116, 115, 34, 58, 91, 48, 44, 50, 52,
                    93, 125, 125, 0, 0, 0, 0, 0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64, 0, 0, 160, 64}));
  const auto ts = read_safetensors(dir.file("ref.safetensors"));
  REQUIRE(ts.size() == 1);
  CHECK(ts[0].name == "attn.0");
  CHECK(ts[0].dtype == "F32");
  CHECK(ts[0].shape == std::vector<int64_t>{1, 2, 3});
  CHECK(ts[0].data == std::vector<double>{0, 1, 2, 3, 4, 5});
  // test_empty: no tensors, with and without {"__metadata__":{"framework":"pt"}}.
  write_bytes(dir.file("empty.safetensors"), from({8, 0, 0, 0, 0, 0, 0, 0, 123, 125, 32, 32, 32, 32, 32, 32}));
  CHECK(read_safetensors(dir.file("empty.safetensors")).empty());
  write_bytes(dir.file("meta.safetensors"),
              from({40, 0, 0, 0, 0, 0, 0, 0, 123, 34, 95, 95, 109, 101, 116, 97, 100, 97, 116, 97, 95, 95, 34, 58, 123,
                    34, 102, 114, 97, 109, 101, 119, 111, 114, 107, 34, 58, 34, 112, 116, 34, 125, 125, 32, 32, 32, 32,
                    32}));
  CHECK(read_safetensors(dir.file("meta.safetensors")).empty());
}

TEST_CASE("safetensors: accepted edge cases (metadata, empty header object, zero-size tensors)", "[io][safetensors]") {
  TempDir dir;
  write_bytes(dir.file("e.safetensors"), st_bytes("{}      ", ""));
  CHECK(read_safetensors(dir.file("e.safetensors")).empty());
  write_bytes(dir.file("z.safetensors"),
              st_bytes(R"({"__metadata__":{"format":"pt","note":"x"},"z":{"dtype":"F32","shape":[0,5],"data_offsets":[0,0]},)"
                       R"("s":{"dtype":"F64","shape":[],"data_offsets":[0,8]}})",
                       f64_bytes(-1.25)));
  const auto ts = read_safetensors(dir.file("z.safetensors"));
  REQUIRE(ts.size() == 2);
  CHECK(ts[0].name == "z");
  CHECK(ts[0].data.empty());
  CHECK(ts[1].shape.empty());
  CHECK(ts[1].data == std::vector<double>{-1.25});
}

TEST_CASE("safetensors: write failures name the path", "[io][safetensors]") {
  TempDir dir;
  const std::string p = dir.file("none/x.safetensors");
  CHECK_THAT(error_of([&] { write_safetensors(p, {{"a", "", {1}, {1.0}}}); }),
             Contains("cannot write '" + p + "'") && Contains("fix: choose a writable path"));
  const auto internal = [&](const std::vector<SafeTensor>& ts) {
    try {
      write_safetensors(dir.file("i.safetensors"), ts);
    } catch (const Error& e) {
      return e.kind() == ErrorKind::Internal;
    }
    return false;
  };
  CHECK(internal({{"a", "", {2}, {1.0}}}));                    // data does not match shape
  CHECK(internal({{"a", "", {1}, {1.0}}, {"a", "", {1}, {2.0}}}));  // duplicate name
  CHECK(internal({{"", "", {1}, {1.0}}}));                     // empty name
  CHECK(internal({{"a", "", {-1}, {}}}));                      // negative shape
}
