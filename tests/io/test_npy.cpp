// test_npy.cpp — .npy writer and reader: round trips, numpy-written bytes, every rejected case (each
// must throw gradflow::Error naming the file and the problem), npy_to_matrix shape checks.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <limits>

#include "gradflow/io/npy.hpp"
#include "temp_dir.hpp"

using namespace gradflow;
using gradflow::test::error_of;
using gradflow::test::f32_bytes;
using gradflow::test::f64_bytes;
using gradflow::test::le_bytes;
using gradflow::test::TempDir;
using gradflow::test::write_bytes;
using Catch::Matchers::Contains;

namespace {

// A .npy file of format `major`.0 with the given dict text (padded to 64 with spaces and '\n').
std::string npy_bytes(const std::string& dict, const std::string& data, int major = 1) {
  const size_t len_bytes = major == 1 ? 2 : 4;
  std::string h = dict;
  while ((8 + len_bytes + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  return std::string("\x93NUMPY") + static_cast<char>(major) + '\0' + le_bytes(h.size(), static_cast<int>(len_bytes)) +
         h + data;
}

std::string f8_dict(const std::string& shape) {
  return "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }";
}

// numpy 1.24: np.save(f, np.array([[1.5, -2.0, 3.25], [0.1, 1e-300, -0.0]])), byte for byte.
std::string numpy_f8_2x3() {
  std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
  dict.append(117 - dict.size(), ' ');
  std::string out = std::string("\x93NUMPY\x01\x00", 8) + "\x76" + std::string(1, '\0') + dict + "\n";
  for (double v : {1.5, -2.0, 3.25, 0.1, 1e-300, -0.0}) out += f64_bytes(v);
  return out;
}

// The message of read_npy on a file holding `bytes`.
std::string read_error(const TempDir& dir, const std::string& bytes, const std::string& name = "bad.npy") {
  const std::string path = dir.file(name);
  write_bytes(path, bytes);
  return error_of([&] { read_npy(path); });
}

}  // namespace

TEST_CASE("npy: Mat round trip is bit-exact", "[io][npy]") {
  TempDir dir;
  Mat m(2, 3);
  m << 1.5, -2.0, 0.1, 1e-300, -0.0, std::numeric_limits<double>::denorm_min();
  const std::string path = dir.file("m.npy");
  write_npy(path, m);
  const NpyArray a = read_npy(path);
  CHECK(a.path == path);
  CHECK(a.descr == "<f8");
  REQUIRE(a.shape == std::vector<int64_t>{2, 3});
  const Mat back = npy_to_matrix(a, 2, 3, "test matrix");
  for (Index i = 0; i < m.size(); ++i) {
    INFO("element " << i);
    CHECK(std::memcmp(&back.data()[i], &m.data()[i], 8) == 0);
  }
  CHECK(std::signbit(back(1, 1)));
}

TEST_CASE("npy: writer layout matches numpy (version 1.0, 64-byte aligned data, header ends in newline)",
          "[io][npy]") {
  TempDir dir;
  Mat m(2, 3);
  m << 1.5, -2.0, 3.25, 0.1, 1e-300, -0.0;
  write_npy(dir.file("m.npy"), m);
  const std::string bytes = test::read_bytes(dir.file("m.npy"));
  CHECK(bytes == numpy_f8_2x3());  // numpy 1.24 happens to pad this shape to the same 128 bytes

  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{}, {5}, {0, 3}, {2, 3, 4}, {1, 1, 1, 1, 1, 1, 1}}) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<double> data(static_cast<size_t>(n));
    for (size_t k = 0; k < data.size(); ++k) data[k] = 0.5 * static_cast<double>(k) - 3.0;
    const std::string path = dir.file("s.npy");
    write_npy(path, data.data(), shape);
    const std::string b = test::read_bytes(path);
    const size_t hlen = static_cast<unsigned char>(b[8]) | static_cast<unsigned char>(b[9]) << 8;
    INFO("shape of " << shape.size() << " dims");
    CHECK(b.compare(0, 8, std::string("\x93NUMPY\x01\x00", 8)) == 0);
    CHECK((10 + hlen) % 64 == 0);
    CHECK(b[10 + hlen - 1] == '\n');
    CHECK(b.size() == 10 + hlen + 8 * data.size());
    const NpyArray a = read_npy(path);
    CHECK(a.shape == shape);
    CHECK(a.data == data);
  }
  write_npy(dir.file("v.npy"), std::vector<double>{1, 2}.data(), {2});
  CHECK(test::read_bytes(dir.file("v.npy")).find("'shape': (2,), }") != std::string::npos);
  write_npy(dir.file("c.npy"), std::vector<double>{7}.data(), {});
  CHECK(test::read_bytes(dir.file("c.npy")).find("'shape': (), }") != std::string::npos);
}

TEST_CASE("npy: files written by numpy are read (f8, f4, scalar, empty, versions 2.0 and 3.0)", "[io][npy]") {
  TempDir dir;
  write_bytes(dir.file("f8.npy"), numpy_f8_2x3());
  NpyArray a = read_npy(dir.file("f8.npy"));
  CHECK(a.shape == std::vector<int64_t>{2, 3});
  CHECK(a.data == std::vector<double>{1.5, -2.0, 3.25, 0.1, 1e-300, -0.0});

  // np.array([[1.5, -2.0], [0.1, 3.0]], dtype=np.float32): f4 values widen exactly.
  write_bytes(dir.file("f4.npy"), npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
                                            f32_bytes(1.5f) + f32_bytes(-2.0f) + f32_bytes(0.1f) + f32_bytes(3.0f)));
  a = read_npy(dir.file("f4.npy"));
  CHECK(a.descr == "<f4");
  CHECK(a.data == std::vector<double>{1.5, -2.0, static_cast<double>(0.1f), 3.0});
  CHECK(a.data[2] != 0.1);

  write_bytes(dir.file("scalar.npy"), npy_bytes(f8_dict("()"), f64_bytes(2.5)));
  a = read_npy(dir.file("scalar.npy"));
  CHECK(a.shape.empty());
  CHECK(a.data == std::vector<double>{2.5});

  write_bytes(dir.file("empty.npy"), npy_bytes(f8_dict("(0, 3)"), ""));
  a = read_npy(dir.file("empty.npy"));
  CHECK(a.shape == std::vector<int64_t>{0, 3});
  CHECK(a.data.empty());
  CHECK(npy_to_matrix(a, 0, 3, "empty").rows() == 0);

  for (int major : {2, 3}) {
    write_bytes(dir.file("v.npy"), npy_bytes(f8_dict("(2,)"), f64_bytes(1) + f64_bytes(2), major));
    a = read_npy(dir.file("v.npy"));
    CHECK(a.data == std::vector<double>{1, 2});
  }

  // Old numpy under Python 2 wrote long literals; double quotes and no trailing comma are valid too.
  write_bytes(dir.file("py2.npy"), npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (1L, 2L), }",
                                             f64_bytes(1) + f64_bytes(2)));
  CHECK(read_npy(dir.file("py2.npy")).shape == std::vector<int64_t>{1, 2});
  write_bytes(dir.file("dq.npy"), npy_bytes("{\"shape\": (2,), \"descr\": \"<f8\", \"fortran_order\": False}",
                                            f64_bytes(1) + f64_bytes(2)));
  CHECK(read_npy(dir.file("dq.npy")).shape == std::vector<int64_t>{2});
}

TEST_CASE("npy: npy_to_matrix accepts (r, c) and (1, r, c) and names both shapes otherwise", "[io][npy]") {
  TempDir dir;
  std::vector<double> d{1, 2, 3, 4, 5, 6};
  write_npy(dir.file("a.npy"), d.data(), {1, 2, 3});
  const NpyArray a = read_npy(dir.file("a.npy"));
  const Mat m = npy_to_matrix(a, 2, 3, "tokens");
  CHECK(m(1, 0) == 4);
  const std::string msg = error_of([&] { npy_to_matrix(a, 3, 2, "input tokens"); });
  CHECK_THAT(msg, Contains(dir.file("a.npy")) && Contains("input tokens") && Contains("(1, 2, 3)") &&
                      Contains("(3, 2)"));
  write_npy(dir.file("b.npy"), d.data(), {6});
  CHECK_THAT(error_of([&] { npy_to_matrix(read_npy(dir.file("b.npy")), 1, 6, "bias"); }),
             Contains("(6,)") && Contains("(1, 6)") && Contains("bias"));
}

TEST_CASE("npy: every malformed file is rejected with the file name and the problem", "[io][npy]") {
  TempDir dir;
  const std::string path = dir.file("bad.npy");
  const std::string two = f64_bytes(1) + f64_bytes(2);
  struct Case {
    const char* what;
    std::string bytes;
    std::vector<const char*> expect;
  };
  const std::vector<Case> cases = {
      {"empty file", "", {"does not start with the magic", "0 bytes"}},
      {"short magic", "\x93NUM", {"does not start with the magic"}},
      {"wrong magic", std::string("\x93NUMPZ\x01\x00", 8) + "xx", {"does not start with the magic"}},
      {"version 4.0", std::string("\x93NUMPY\x04\x00", 8) + "xxxx", {"unsupported .npy format version 4.0"}},
      {"version 1.1", std::string("\x93NUMPY\x01\x01", 8) + "xx", {"version 1.1"}},
      {"cut in length field", std::string("\x93NUMPY\x02\x00\x10", 9), {"ends inside the header length field"}},
      {"header past end", std::string("\x93NUMPY\x01\x00", 8) + le_bytes(500, 2) + "{'descr'",
       {"header length 500 runs past the end"}},
      {"header past end (v2)", std::string("\x93NUMPY\x02\x00", 8) + le_bytes(0xFFFFFFFFu, 4),
       {"header length 4294967295 runs past the end"}},
      {"unterminated dict", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2,)", two),
       {"not a valid .npy dict literal"}},
      {"not a dict", npy_bytes("[1, 2, 3]", two), {"not a valid .npy dict literal", "expected '{'"}},
      {"missing shape", npy_bytes("{'descr': '<f8', 'fortran_order': False, }", two), {"has no 'shape'"}},
      {"missing descr", npy_bytes("{'fortran_order': False, 'shape': (2,), }", two), {"has no 'descr'"}},
      {"extra key", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': 1}", two),
       {"unexpected key 'x'"}},
      {"duplicate key", npy_bytes("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (2,)}", two),
       {"'descr' appears twice"}},
      {"shape not a tuple", npy_bytes(f8_dict("(2)"), two), {"not a tuple"}},
      {"shape a list", npy_bytes(f8_dict("[2]"), two), {"'shape' is not a tuple"}},
      {"negative dimension", npy_bytes(f8_dict("(-2,)"), two), {"negative dimension"}},
      {"huge dimension", npy_bytes(f8_dict("(99999999999999999999,)"), two), {"too large"}},
      {"structured dtype", npy_bytes("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,), }", two),
       {"structured dtypes are not supported"}},
      {"fortran_order not bool", npy_bytes("{'descr': '<f8', 'fortran_order': 0, 'shape': (2,), }", two),
       {"'fortran_order' is not True or False"}},
      {"text after dict", npy_bytes(f8_dict("(2,)") + " x", two), {"unexpected text after the closing '}'"}},
      {"fortran order", npy_bytes("{'descr': '<f8', 'fortran_order': True, 'shape': (2,), }", two),
       {"fortran_order arrays are not supported; fix: save with np.ascontiguousarray"}},
      {"big-endian", npy_bytes("{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }", two),
       {"dtype '>f8' is not supported"}},
      {"int64", npy_bytes("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", two),
       {"dtype '<i8' is not supported"}},
      {"shape overflow", npy_bytes(f8_dict("(4294967296, 4294967296, 16)"), two), {"overflow"}},
      {"truncated data", npy_bytes(f8_dict("(3,)"), two), {"truncated", "needs 24 data bytes", "has 16"}},
      {"trailing bytes", npy_bytes(f8_dict("(1,)"), two), {"8 trailing bytes"}},
      {"NaN", npy_bytes(f8_dict("(2, 2)"), two + f64_bytes(std::nan("")) + f64_bytes(1)), {"element 2", "is NaN"}},
      {"Inf", npy_bytes(f8_dict("(3,)"), f64_bytes(-HUGE_VAL) + two), {"element 0", "-Inf"}},
      {"f4 Inf", npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f32_bytes(1) + f32_bytes(HUGE_VALF)),
       {"element 1", "+Inf"}},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    const std::string msg = read_error(dir, c.bytes);
    INFO("message: " << msg);
    CHECK_THAT(msg, Contains("'" + path + "'"));
    CHECK_THAT(msg, Contains("; fix: "));
    CHECK(msg.find('\n') == std::string::npos);
    for (const char* e : c.expect) CHECK_THAT(msg, Contains(e));
  }
  CHECK_THAT(error_of([&] { read_npy(dir.file("missing.npy")); }),
             Contains("cannot read '" + dir.file("missing.npy") + "'") && Contains("No such file"));
  CHECK_THAT(error_of([&] { read_npy(dir.path()); }), Contains("is a directory"));
  REQUIRE(::mkfifo(dir.file("fifo.npy").c_str(), 0600) == 0);  // must not block waiting for a writer
  CHECK_THAT(error_of([&] { read_npy(dir.file("fifo.npy")); }), Contains("not a regular file"));
}

TEST_CASE("npy: write failures name the path and leave no temporary file", "[io][npy]") {
  TempDir dir;
  const Mat m = Mat::Ones(2, 2);
  const std::string nodir = dir.file("no/such/dir/m.npy");
  CHECK_THAT(error_of([&] { write_npy(nodir, m); }),
             Contains("cannot write '" + nodir + "': No such file or directory; fix: choose a writable path"));
  // The target is a directory: the temporary file is written, then rename fails and it must be removed.
  std::filesystem::create_directory(dir.file("target"));
  CHECK_THAT(error_of([&] { write_npy(dir.file("target"), m); }), Contains("cannot write '" + dir.file("target") + "'"));
  // Overwriting an existing file works and leaves only that file.
  write_npy(dir.file("m.npy"), m);
  write_npy(dir.file("m.npy"), Mat::Zero(1, 1));
  CHECK(read_npy(dir.file("m.npy")).data == std::vector<double>{0.0});
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    INFO(e.path().string());
    CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
  }
}

TEST_CASE("npy: integer arrays (token ids) are read exactly as int64 / int32, other dtypes refused", "[io][npy]") {
  TempDir dir;
  // int64 beyond 2^53 (a double would round it) and negative values come back exactly
  const int64_t big = (int64_t(1) << 53) + 1;
  write_bytes(dir.file("i8.npy"), npy_bytes("{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }",
                                            le_bytes(static_cast<uint64_t>(big), 8) + le_bytes(7, 8) +
                                                le_bytes(static_cast<uint64_t>(int64_t(-2)), 8)));
  const NpyInts a = read_npy_ints(dir.file("i8.npy"));
  CHECK(a.descr == "<i8");
  CHECK(a.shape == std::vector<int64_t>{3});
  CHECK(a.data == std::vector<int64_t>{big, 7, -2});
  write_bytes(dir.file("i4.npy"), npy_bytes("{'descr': '<i4', 'fortran_order': False, 'shape': (1, 2), }",
                                            le_bytes(50256, 4) + le_bytes(0xFFFFFFFFu, 4)));
  const NpyInts b = read_npy_ints(dir.file("i4.npy"));
  CHECK(b.shape == std::vector<int64_t>{1, 2});
  CHECK(b.data == std::vector<int64_t>{50256, -1});  // sign-extended
  // floats are not ids, and ids are not floats
  write_bytes(dir.file("f8.npy"), npy_bytes(f8_dict("(1,)"), f64_bytes(3)));
  CHECK_THAT(error_of([&] { read_npy_ints(dir.file("f8.npy")); }),
             Contains("dtype '<f8' is not supported (only '<i8' int64 and '<i4' int32 are)"));
  CHECK_THAT(error_of([&] { read_npy(dir.file("i8.npy")); }), Contains("dtype '<i8' is not supported"));
  // the layout checks are read_npy's: a truncated file is refused
  write_bytes(dir.file("short.npy"), npy_bytes("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", le_bytes(1, 8)));
  CHECK_THAT(error_of([&] { read_npy_ints(dir.file("short.npy")); }), Contains("truncated"));
}
