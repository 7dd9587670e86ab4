// npy.cpp — .npy writer and checked reader (see npy.hpp and docs/formats.md).
// Reader order: magic, version, header length vs file size, header dict, dtype, shape product (with
// overflow checks), data size vs the rest of the file, then the values (finite only).
#include "gradflow/io/npy.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <new>

#include "gradflow/core/error.hpp"
#include "gradflow/core/sha256.hpp"
#include "io/file_bytes.hpp"

namespace gradflow {

namespace {

using io_detail::printable;

const char kMagic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};
constexpr size_t kAlign = 64;  // data offset alignment of the files we write (numpy uses 64 too)

const char* const kFixResave = "re-save the array with numpy.save(path, np.ascontiguousarray(a, dtype='<f8'))";

[[noreturn]] void fail(const std::string& path, const std::string& what, const std::string& fix = kFixResave) {
  throw Error("npy file '" + path + "': " + what + "; fix: " + fix);
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// ---- the header: a Python dict literal with exactly 'descr', 'fortran_order' and 'shape' ----------

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// A tiny recursive-descent parser for the subset of Python literals numpy writes: strings, True/False,
// non-negative integers (an old trailing 'L' allowed) and tuples of integers.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& path) : s_(text), path_(path) {}

  Header parse() {
    Header h;
    bool has_descr = false, has_fortran = false, has_shape = false;
    ws();
    expect('{');
    ws();
    while (peek() != '}') {
      const std::string key = string_literal();
      ws();
      expect(':');
      ws();
      if (key == "descr") {
        if (has_descr) bad("key 'descr' appears twice");
        if (peek() != '\'' && peek() != '"') bad("'descr' is not a string (structured dtypes are not supported)");
        h.descr = string_literal();
        has_descr = true;
      } else if (key == "fortran_order") {
        if (has_fortran) bad("key 'fortran_order' appears twice");
        h.fortran_order = boolean();
        has_fortran = true;
      } else if (key == "shape") {
        if (has_shape) bad("key 'shape' appears twice");
        h.shape = tuple();
        has_shape = true;
      } else {
        bad("unexpected key '" + printable(key, 40) + "' (only 'descr', 'fortran_order', 'shape' are allowed)");
      }
      ws();
      if (peek() == ',') {
        ++i_;
        ws();
      } else if (peek() != '}') {
        bad("expected ',' or '}'");
      }
    }
    ++i_;  // '}'
    ws();
    if (i_ != s_.size()) bad("unexpected text after the closing '}'");
    if (!has_descr) bad("the header has no 'descr'");
    if (!has_fortran) bad("the header has no 'fortran_order'");
    if (!has_shape) bad("the header has no 'shape'");
    return h;
  }

 private:
  [[noreturn]] void bad(const std::string& what) const {
    fail(path_, "header is not a valid .npy dict literal: " + what + " at header byte " + std::to_string(i_) +
                    " (header: " + printable(trimmed(), 100) + ")");
  }
  std::string trimmed() const {  // the header without numpy's space padding and final newline
    const size_t end = s_.find_last_not_of(" \t\r\n");
    return end == std::string::npos ? std::string() : s_.substr(0, end + 1);
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  bool at_end() const { return i_ >= s_.size(); }
  void ws() {
    while (!at_end() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  void expect(char c) {
    if (at_end() || s_[i_] != c) bad(std::string("expected '") + c + "'");
    ++i_;
  }
  std::string string_literal() {
    if (at_end() || (s_[i_] != '\'' && s_[i_] != '"')) bad("expected a quoted string");
    const char q = s_[i_++];
    std::string out;
    while (true) {
      if (at_end()) bad("unterminated string");
      const char c = s_[i_++];
      if (c == q) break;
      if (c == '\\' || c == '\n') bad("escapes and line breaks in strings are not supported");
      out += c;
    }
    return out;
  }
  bool boolean() {
    if (s_.compare(i_, 4, "True") == 0) {
      i_ += 4;
      return true;
    }
    if (s_.compare(i_, 5, "False") == 0) {
      i_ += 5;
      return false;
    }
    bad("'fortran_order' is not True or False");
  }
  int64_t integer() {
    bool neg = false;
    if (peek() == '-') {
      neg = true;
      ++i_;
    }
    if (at_end() || s_[i_] < '0' || s_[i_] > '9') bad("expected an integer in 'shape'");
    uint64_t v = 0;
    while (!at_end() && s_[i_] >= '0' && s_[i_] <= '9') {
      const uint64_t d = static_cast<uint64_t>(s_[i_] - '0');
      if (v > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - d) / 10) bad("a dimension of 'shape' is too large");
      v = v * 10 + d;
      ++i_;
    }
    if (peek() == 'L' || peek() == 'l') ++i_;  // Python 2 long literal, as written by old numpy
    if (neg && v != 0) bad("'shape' has a negative dimension");
    return static_cast<int64_t>(v);
  }
  std::vector<int64_t> tuple() {
    if (peek() != '(') bad("'shape' is not a tuple");
    ++i_;
    ws();
    std::vector<int64_t> dims;
    bool comma = false;
    while (peek() != ')') {
      if (dims.size() >= 64) bad("'shape' has more than 64 dimensions");
      dims.push_back(integer());
      ws();
      if (peek() == ',') {
        ++i_;
        comma = true;
        ws();
      } else if (peek() != ')') {
        bad("expected ',' or ')' in 'shape'");
      }
    }
    ++i_;  // ')'
    if (dims.size() == 1 && !comma) bad("'shape' is a parenthesised integer, not a tuple (write (n,))");
    return dims;
  }

  const std::string& s_;
  const std::string& path_;
  size_t i_ = 0;
};

uint32_t le_u32(const unsigned char* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

uint64_t le_u64(const unsigned char* p) {
  uint64_t v = 0;
  for (int k = 7; k >= 0; --k) v = v << 8 | p[k];
  return v;
}

// A checked file: its bytes, header, element size and count; the data are bytes [data_start, data_start + numel·itemsize).
struct Checked {
  std::string bytes;
  Header h;
  size_t itemsize = 0, data_start = 0;
  uint64_t numel = 0;
};

// Everything up to the data: magic, version, header, dtype (`itemsizes`: the dtypes accepted and their sizes,
// `accepted`/`fix` for the message naming another), and the exact data length.
Checked check_file(const std::string& path, const std::vector<std::pair<std::string, size_t>>& itemsizes,
                   const std::string& accepted, const std::string& fix) {
  Checked c;
  c.bytes = io_detail::read_file_bytes(path);
  const std::string& bytes = c.bytes;
  const size_t size = bytes.size();
  const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());

  if (size < 8 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    fail(path, "not a .npy file: it does not start with the magic \\x93NUMPY followed by a version (" +
                   std::to_string(size) + " bytes)",
         "pass a file written by numpy.save");
  const int major = u[6], minor = u[7];
  size_t len_bytes = 0;
  if (major == 1 && minor == 0) len_bytes = 2;
  else if ((major == 2 || major == 3) && minor == 0) len_bytes = 4;
  else fail(path, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                      " (1.0, 2.0 and 3.0 are supported)");
  if (size < 8 + len_bytes)
    fail(path, "file of " + std::to_string(size) + " bytes ends inside the header length field");
  const size_t header_len = len_bytes == 2 ? size_t(u[8]) | size_t(u[9]) << 8 : size_t(le_u32(u + 8));
  const size_t header_start = 8 + len_bytes;
  if (header_len > size - header_start)
    fail(path, "header length " + std::to_string(header_len) + " runs past the end of the file (" +
                   std::to_string(size) + " bytes; truncated?)");

  const std::string header_text = bytes.substr(header_start, header_len);
  c.h = HeaderParser(header_text, path).parse();
  const Header& h = c.h;
  if (h.fortran_order)
    fail(path, "fortran_order arrays are not supported", "save with np.ascontiguousarray");
  size_t itemsize = 0;
  for (const auto& [descr, bytes_each] : itemsizes)
    if (h.descr == descr) itemsize = bytes_each;
  if (itemsize == 0) fail(path, "dtype '" + printable(h.descr, 40) + "' is not supported (only " + accepted + " are)", fix);

  // numel * itemsize must be addressable: bound numel by SIZE_MAX / 8 while multiplying.
  const uint64_t limit = std::numeric_limits<size_t>::max() / 8;
  uint64_t numel = 1;
  for (int64_t d : h.shape) {
    const uint64_t ud = static_cast<uint64_t>(d);  // >= 0, checked by the parser
    if (ud != 0 && numel > limit / ud)
      fail(path, "shape " + shape_str(h.shape) + " has more elements than can be addressed (overflow)");
    numel *= ud;
  }
  const size_t need = static_cast<size_t>(numel) * itemsize;
  const size_t data_start = header_start + header_len;
  const size_t have = size - data_start;
  if (have < need)
    fail(path, "truncated: shape " + shape_str(h.shape) + " of " + h.descr + " needs " + std::to_string(need) +
                   " data bytes but the file has " + std::to_string(have),
         "re-save the array; the file was cut short");
  if (have > need)
    fail(path, std::to_string(have - need) + " trailing bytes after the " + std::to_string(need) +
                   " data bytes of shape " + shape_str(h.shape) + " " + h.descr);

  c.itemsize = itemsize;
  c.data_start = data_start;
  c.numel = numel;
  return c;
}

NpyArray read_impl(const std::string& path) {
  const Checked c = check_file(path, {{"<f8", 8}, {"<f4", 4}}, "'<f8' float64 and '<f4' float32",
                               "convert with a.astype('<f8') before saving");
  const Header& h = c.h;
  const size_t itemsize = c.itemsize;
  const auto* u = reinterpret_cast<const unsigned char*>(c.bytes.data());
  const size_t data_start = c.data_start;
  const uint64_t numel = c.numel;
  NpyArray a;
  a.path = path;
  a.descr = h.descr;
  a.shape = h.shape;
  a.sha256 = sha256_hex(c.bytes);
  a.data.resize(static_cast<size_t>(numel));
  const unsigned char* p = u + data_start;
  for (size_t k = 0; k < a.data.size(); ++k) {
    double v;
    if (itemsize == 8) {
      const uint64_t bits = le_u64(p + 8 * k);
      std::memcpy(&v, &bits, 8);
    } else {
      const uint32_t bits = le_u32(p + 4 * k);
      float f;
      std::memcpy(&f, &bits, 4);
      v = f;
    }
    if (!std::isfinite(v))
      fail(path, std::string("element ") + std::to_string(k) + " (flat index, C order) of shape " +
                     shape_str(h.shape) + " is " + (std::isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf"),
           "only finite values are accepted; check the array with np.isfinite(a).all()");
    a.data[k] = v;
  }
  return a;
}

}  // namespace

void write_npy(const std::string& path, const double* data, std::vector<int64_t> shape) {
  uint64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error("internal: write_npy('" + path + "') got negative shape " + shape_str(shape), ErrorKind::Internal);
    const uint64_t ud = static_cast<uint64_t>(d);
    if (ud != 0 && numel > (std::numeric_limits<size_t>::max() / 8) / ud)
      throw Error("internal: write_npy('" + path + "') shape " + shape_str(shape) + " overflows", ErrorKind::Internal);
    numel *= ud;
  }
  if (numel > 0 && data == nullptr)
    throw Error("internal: write_npy('" + path + "') got no data for shape " + shape_str(shape), ErrorKind::Internal);

  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape_str(shape) + ", }";
  const size_t unpadded = 10 + header.size() + 1;  // magic+version+u16 length, dict, '\n'
  header.append((kAlign - unpadded % kAlign) % kAlign, ' ');
  header += '\n';
  if (header.size() > 0xFFFF)
    throw Error("internal: write_npy('" + path + "') header too long for format 1.0", ErrorKind::Internal);

  std::string head;
  head.reserve(10 + header.size());
  head.append(kMagic, sizeof kMagic);
  head += '\x01';
  head += '\x00';
  head += static_cast<char>(header.size() & 0xFF);
  head += static_cast<char>(header.size() >> 8);
  head += header;
  const size_t data_bytes = static_cast<size_t>(numel) * 8;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  // '<f8' is the host's own layout: the row-major buffer goes out as it is, in one write
  io_detail::write_file_atomic(path, {{head.data(), head.size()}, {data, data_bytes}});
#else
  std::string body(data_bytes, '\0');
  for (uint64_t k = 0; k < numel; ++k) {
    uint64_t bits;
    std::memcpy(&bits, data + k, 8);
    for (int b = 0; b < 8; ++b) body[8 * k + b] = static_cast<char>((bits >> (8 * b)) & 0xFF);
  }
  io_detail::write_file_atomic(path, {{head.data(), head.size()}, {body.data(), body.size()}});
#endif
}

void write_npy(const std::string& path, const Mat& m) {
  write_npy(path, m.data(), {static_cast<int64_t>(m.rows()), static_cast<int64_t>(m.cols())});
}

NpyArray read_npy(const std::string& path) {
  try {
    return read_impl(path);
  } catch (const std::bad_alloc&) {
    throw Error("npy file '" + path + "': out of memory while reading; fix: free memory or use a smaller array");
  }
}

NpyInts read_npy_ints(const std::string& path) {
  try {
    const Checked c = check_file(path, {{"<i8", 8}, {"<i4", 4}}, "'<i8' int64 and '<i4' int32",
                                 "convert with a.astype(np.int64) before saving");
    const auto* p = reinterpret_cast<const unsigned char*>(c.bytes.data()) + c.data_start;
    NpyInts a;
    a.path = path;
    a.descr = c.h.descr;
    a.shape = c.h.shape;
    a.data.resize(static_cast<size_t>(c.numel));
    for (size_t k = 0; k < a.data.size(); ++k) {
      if (c.itemsize == 8) {
        const uint64_t bits = le_u64(p + 8 * k);
        std::memcpy(&a.data[k], &bits, 8);
      } else {
        const uint32_t bits = le_u32(p + 4 * k);
        int32_t v;
        std::memcpy(&v, &bits, 4);
        a.data[k] = v;
      }
    }
    return a;
  } catch (const std::bad_alloc&) {
    throw Error("npy file '" + path + "': out of memory while reading; fix: free memory or use a smaller array");
  }
}

Mat npy_to_matrix(const NpyArray& a, Index rows, Index cols, const std::string& what) {
  const std::vector<int64_t> want{static_cast<int64_t>(rows), static_cast<int64_t>(cols)};
  const bool ok = (a.shape.size() == 2 && a.shape[0] == want[0] && a.shape[1] == want[1]) ||
                  (a.shape.size() == 3 && a.shape[0] == 1 && a.shape[1] == want[0] && a.shape[2] == want[1]);
  if (!ok)
    throw Error("npy file '" + a.path + "' (" + what + "): shape " + shape_str(a.shape) + " does not match the expected " +
                shape_str(want) + " or (1, " + std::to_string(rows) + ", " + std::to_string(cols) +
                "); fix: save an array of shape " + shape_str(want));
  if (static_cast<Index>(a.data.size()) != rows * cols)
    throw Error("internal: NpyArray from '" + a.path + "' holds " + std::to_string(a.data.size()) +
                    " values for shape " + shape_str(a.shape), ErrorKind::Internal);
  Mat m(rows, cols);
  if (rows * cols > 0) m = ConstMatMap(a.data.data(), rows, cols);
  return m;
}

}  // namespace gradflow
