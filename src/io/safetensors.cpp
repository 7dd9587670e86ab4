// safetensors.cpp — safetensors reader and F64 writer (see safetensors.hpp and docs/formats.md).
// Reader order (the header is read and checked before any data: issue 13 item 9): 8-byte length, header bounds, JSON (depth-limited, duplicate keys rejected), per
// tensor dtype/shape/offsets with overflow-checked sizes, then the data section must be tiled exactly
// (sorted by begin: no overlap, no gap, no trailing bytes), then values converted and checked finite.
#include "gradflow/io/safetensors.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <new>
#include <nlohmann/json.hpp>
#include <set>

#include "gradflow/core/error.hpp"
#include "io/file_bytes.hpp"
#include "io/staged_files.hpp"
#include "io/json_nesting.hpp"

namespace gradflow {

namespace {

using json = nlohmann::json;
using io_detail::printable;

constexpr uint64_t kMaxHeaderBytes = 100000000;  // the reference implementation's limit
constexpr int kMaxHeaderDepth = 8;               // a valid header nests 3 deep
constexpr size_t kMaxDims = 64;
constexpr uint64_t kMaxElements = std::numeric_limits<size_t>::max() / 8;

const char* const kFixReexport = "re-export the checkpoint with safetensors.torch.save_file(state_dict, path)";

[[noreturn]] void fail(const std::string& path, const std::string& what, const std::string& fix = kFixReexport) {
  throw Error("safetensors file '" + path + "': " + what + "; fix: " + fix);
}

[[noreturn]] void fail_tensor(const std::string& path, const std::string& name, const std::string& what,
                              const std::string& fix = kFixReexport) {
  fail(path, "tensor '" + printable(name) + "': " + what, fix);
}

size_t itemsize_of(const std::string& dtype) {
  if (dtype == "F64") return 8;
  if (dtype == "F32") return 4;
  if (dtype == "F16" || dtype == "BF16") return 2;
  return 0;
}

// The integer and boolean dtypes of the format: their headers are valid (checkpoints carry such buffers, e.g.
// GPT-NeoX's uint8 causal mask, which a layout ignores), their values are never read as parameters.
size_t other_itemsize_of(const std::string& dtype) {
  if (dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "I8" || dtype == "U8" || dtype == "BOOL") return 1;
  return 0;
}

const char* const kSupportedDtypes = "F64, F32, F16, BF16 are";

uint64_t le_u64(const unsigned char* p) {
  uint64_t v = 0;
  for (int k = 7; k >= 0; --k) v = v << 8 | p[k];
  return v;
}

// A non-negative JSON integer, or an Error naming the tensor and `field`.
uint64_t json_uint(const json& v, const std::string& path, const std::string& name, const std::string& field) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) fail_tensor(path, name, field + " has a negative value " + v.dump());
  fail_tensor(path, name, field + " has a non-integer value " + printable(v.dump(), 40));
}

struct Entry {
  std::string name;
  std::string dtype;
  size_t itemsize = 0;
  std::vector<int64_t> shape;
  uint64_t numel = 1;
  uint64_t begin = 0, end = 0;
};

Entry parse_entry(const std::string& path, const std::string& name, const json& info, uint64_t data_size) {
  Entry e;
  e.name = name;
  if (!info.is_object()) fail_tensor(path, name, "header entry is not an object");
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!info.contains(key)) fail_tensor(path, name, std::string("header entry has no \"") + key + "\"");

  const json& dtype = info["dtype"];
  if (!dtype.is_string()) fail_tensor(path, name, "\"dtype\" is not a string");
  e.dtype = dtype.get<std::string>();
  e.itemsize = itemsize_of(e.dtype);
  if (e.itemsize == 0) e.itemsize = other_itemsize_of(e.dtype);
  if (e.itemsize == 0)
    fail_tensor(path, name, "dtype '" + printable(e.dtype, 20) + "' is not supported (" + kSupportedDtypes + ")",
                "convert the tensor to a floating-point dtype before saving");

  const json& shape = info["shape"];
  if (!shape.is_array()) fail_tensor(path, name, "\"shape\" is not an array");
  if (shape.size() > kMaxDims) fail_tensor(path, name, "shape has more than " + std::to_string(kMaxDims) + " dimensions");
  for (const json& d : shape) {
    const uint64_t ud = json_uint(d, path, name, "shape");
    if (ud > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail_tensor(path, name, "shape dimension " + std::to_string(ud) + " is too large");
    e.shape.push_back(static_cast<int64_t>(ud));
  }
  for (int64_t d : e.shape) {
    const uint64_t ud = static_cast<uint64_t>(d);
    if (ud != 0 && e.numel > kMaxElements / ud)
      fail_tensor(path, name, "shape " + shape_text(e.shape) + " has more elements than can be addressed (overflow)");
    e.numel *= ud;
  }
  const uint64_t nbytes = e.numel * e.itemsize;  // cannot overflow: numel <= SIZE_MAX / 8

  const json& offs = info["data_offsets"];
  if (!offs.is_array() || offs.size() != 2) fail_tensor(path, name, "\"data_offsets\" is not an array of two integers");
  e.begin = json_uint(offs[0], path, name, "data_offsets");
  e.end = json_uint(offs[1], path, name, "data_offsets");
  const std::string offs_str = "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]";
  if (e.end < e.begin) fail_tensor(path, name, offs_str + " are not increasing");
  if (e.end > data_size)
    fail_tensor(path, name, offs_str + " lie outside the data section of " + std::to_string(data_size) + " bytes",
                "the file is truncated or corrupt; " + std::string(kFixReexport));
  if (e.end - e.begin != nbytes)
    fail_tensor(path, name, offs_str + " span " + std::to_string(e.end - e.begin) + " bytes but shape " +
                                shape_text(e.shape) + " of " + e.dtype + " needs " + std::to_string(nbytes));
  return e;
}

// The C-order multi-index of flat element k, e.g. "[1, 2]".
std::string multi_index(uint64_t k, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t i = shape.size(); i-- > 0;) {
    const uint64_t d = static_cast<uint64_t>(shape[i]);
    idx[i] = static_cast<int64_t>(k % d);
    k /= d;
  }
  return shape_text(idx);
}

enum class Kind { F64, F32, F16, BF16 };

Kind kind_of(const std::string& dtype) {
  return dtype == "F64" ? Kind::F64 : dtype == "F32" ? Kind::F32 : dtype == "F16" ? Kind::F16 : Kind::BF16;
}

double load(const unsigned char* p, Kind kind) {
  if (kind == Kind::F64) {
    const uint64_t bits = le_u64(p);
    double v;
    std::memcpy(&v, &bits, 8);
    return v;
  }
  if (kind == Kind::F32) {
    const uint32_t bits = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  const uint16_t bits = static_cast<uint16_t>(p[0] | p[1] << 8);
  return kind == Kind::F16 ? half_to_double(bits) : bfloat16_to_double(bits);
}

// Every check of the header and of the data section's tiling, before any tensor data is read: a garbage or
// hostile header is refused after reading at most 8 + its length bytes (never the whole file).
std::vector<Entry> read_header(const io_detail::InputFile& file, const std::string& path, uint64_t& data_start) {
  const uint64_t size = file.size();
  if (size < 8)
    fail(path, "file of " + std::to_string(size) + " bytes is shorter than the 8-byte header length",
         "the file is truncated or not a safetensors file");
  unsigned char len[8];
  file.read_at(0, 8, len);
  const uint64_t n = le_u64(len);
  if (n > size - 8)
    fail(path, "header length " + std::to_string(n) + " runs past the end of the file (" + std::to_string(size) +
                   " bytes)",
         "the file is truncated or not a safetensors file");
  if (n > kMaxHeaderBytes)
    fail(path, "header of " + std::to_string(n) + " bytes exceeds the limit of " + std::to_string(kMaxHeaderBytes));
  std::string header(static_cast<size_t>(n), '\0');
  file.read_at(8, header.size(), &header[0]);
  const uint64_t data_size = size - 8 - n;
  data_start = 8 + n;
  if (header.empty() || header[0] != '{') fail(path, "header does not start with '{' (not a JSON object)");
  if (io_detail::json_nesting(header, kMaxHeaderDepth) > kMaxHeaderDepth)
    fail(path, "header nests deeper than " + std::to_string(kMaxHeaderDepth) + " levels");

  // Parse, rejecting duplicate keys (JSON would silently keep the last one).
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  const json::parser_callback_t on_event = [&](int, json::parse_event_t ev, json& parsed) {
    if (ev == json::parse_event_t::object_start) {
      open_objects.emplace_back();
    } else if (ev == json::parse_event_t::object_end) {
      if (!open_objects.empty()) open_objects.pop_back();
    } else if (ev == json::parse_event_t::key && parsed.is_string() && !open_objects.empty()) {
      if (!open_objects.back().insert(parsed.get<std::string>()).second && duplicate.empty())
        duplicate = parsed.get<std::string>();
    }
    return true;
  };
  json h;
  try {
    h = json::parse(header.begin(), header.end(), on_event);
  } catch (const json::exception& e) {
    fail(path, "header is not valid JSON (" + printable(e.what(), 160) + ")");
  }
  if (!duplicate.empty()) fail(path, "header has the key '" + printable(duplicate) + "' twice");
  if (!h.is_object()) fail(path, "header is not a JSON object");

  std::vector<Entry> entries;
  for (auto it = h.begin(); it != h.end(); ++it) {
    if (it.key() == "__metadata__") {
      bool ok = it.value().is_object();
      if (ok)
        for (const json& v : it.value()) ok = ok && v.is_string();
      if (!ok) fail(path, "\"__metadata__\" is not an object of strings");
      continue;
    }
    entries.push_back(parse_entry(path, it.key(), it.value(), data_size));
  }

  // The tensors must tile the data section exactly: sorted by begin, each starts where the last ended.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end != b.end ? a.end < b.end : a.name < b.name;
  });
  uint64_t expected = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (e.begin < expected)
      fail_tensor(path, e.name, "data [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                                    ") overlaps tensor '" + printable(entries[i - 1].name) + "' ending at " +
                                    std::to_string(expected));
    if (e.begin > expected)
      fail_tensor(path, e.name, std::to_string(e.begin - expected) + " unused bytes before its data at offset " +
                                    std::to_string(e.begin) + " (tensors must be contiguous)");
    expected = e.end;
  }
  if (expected != data_size)
    fail(path, std::to_string(data_size - expected) + " trailing bytes after the last tensor's data (data section " +
                   std::to_string(data_size) + " bytes, tensors end at " + std::to_string(expected) + ")");

  return entries;
}

// Reads the tensors `want` accepts (all when it is empty), in file order; raw bytes go through a bounded buffer,
// so the peak is the doubles returned plus at most kChunkBytes.
std::vector<SafeTensor> read_impl(const std::string& path, const std::function<bool(const std::string&)>& want) {
  const io_detail::InputFile file(path);
  uint64_t data_start = 0;
  const std::vector<Entry> entries = read_header(file, path, data_start);
  constexpr uint64_t kChunkBytes = kSafetensorsReadBufferBytes;
  std::vector<unsigned char> buf;
  std::vector<SafeTensor> out;
  for (const Entry& e : entries) {
    if (want && !want(e.name)) continue;
    if (itemsize_of(e.dtype) == 0)
      fail_tensor(path, e.name, "dtype '" + e.dtype + "' is not supported (" + kSupportedDtypes + ")",
                  "convert the tensor to a floating-point dtype before saving (an integer buffer is read only where "
                  "the checkpoint's layout ignores it)");
    SafeTensor t{e.name, e.dtype, e.shape, std::vector<double>(static_cast<size_t>(e.numel))};
    const Kind kind = kind_of(e.dtype);
    const uint64_t per_chunk = kChunkBytes / e.itemsize;
    for (uint64_t k0 = 0; k0 < e.numel; k0 += per_chunk) {
      const uint64_t count = std::min(per_chunk, e.numel - k0);
      buf.resize(static_cast<size_t>(count * e.itemsize));
      file.read_at(data_start + e.begin + k0 * e.itemsize, buf.size(), buf.data());
      for (uint64_t j = 0; j < count; ++j) {
        const double v = load(buf.data() + j * e.itemsize, kind);
        const uint64_t k = k0 + j;
        if (!std::isfinite(v))
          fail_tensor(path, e.name, "element " + std::to_string(k) + " (index " + multi_index(k, e.shape) + ") is " +
                                        (std::isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf"),
                      "only finite values are accepted; check the tensor with torch.isfinite(t).all()");
        t.data[static_cast<size_t>(k)] = v;
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

double half_to_double(uint16_t bits) {
  const bool neg = (bits & 0x8000u) != 0;
  const int exp = (bits >> 10) & 0x1F;
  const int man = bits & 0x3FF;
  double v;
  if (exp == 0) v = std::ldexp(static_cast<double>(man), -24);  // zero and subnormals: man * 2^-24
  else if (exp == 31) v = man == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  else v = std::ldexp(static_cast<double>(man + 1024), exp - 25);  // (1 + man/2^10) * 2^(exp-15)
  return neg ? -v : v;
}

double bfloat16_to_double(uint16_t bits) {
  const uint32_t f32 = static_cast<uint32_t>(bits) << 16;  // bfloat16 is the top half of a float32
  float f;
  std::memcpy(&f, &f32, 4);
  return static_cast<double>(f);
}

std::vector<SafeTensor> read_safetensors_header(const std::string& path) {
  const io_detail::InputFile file(path);
  uint64_t data_start = 0;
  std::vector<SafeTensor> out;
  for (const Entry& e : read_header(file, path, data_start)) out.push_back(SafeTensor{e.name, e.dtype, e.shape, {}});
  return out;
}

std::vector<SafeTensor> read_safetensors(const std::string& path,
                                         const std::function<bool(const std::string&)>& want) {
  try {
    return read_impl(path, want);
  } catch (const std::bad_alloc&) {
    throw Error("safetensors file '" + path + "': out of memory while reading; fix: free memory or split the file");
  }
}

namespace {

// A safetensors file's bytes as pieces: `head` (length and header, padded to 8 bytes), then each tensor's float64
// values where they are in memory (little-endian hosts) or copied into `body`.
std::vector<io_detail::ByteSpan> safetensors_pieces(const std::string& path, const std::vector<SafeTensor>& tensors,
                                                    const std::string& dtype, std::string& head, std::string& body) {
  auto internal = [&](const std::string& what) {
    throw Error("internal: write_safetensors('" + path + "'): " + what, ErrorKind::Internal);
  };
  if (dtype != "F64") internal("dtype '" + dtype + "' is not supported (only F64 is written)");

  nlohmann::ordered_json header;
  header["__metadata__"] = {{"format", "pt"}};
  std::set<std::string> seen;
  uint64_t offset = 0;
  for (const SafeTensor& t : tensors) {
    if (t.name.empty() || t.name == "__metadata__") internal("invalid tensor name '" + t.name + "'");
    if (!seen.insert(t.name).second) internal("tensor '" + t.name + "' given twice");
    uint64_t numel = 1;
    for (int64_t d : t.shape) {
      if (d < 0) internal("tensor '" + t.name + "' has negative shape " + shape_text(t.shape));
      const uint64_t ud = static_cast<uint64_t>(d);
      if (ud != 0 && numel > kMaxElements / ud) internal("tensor '" + t.name + "' shape overflows");
      numel *= ud;
    }
    if (numel != t.data.size())
      internal("tensor '" + t.name + "' has " + std::to_string(t.data.size()) + " values for shape " + shape_text(t.shape));
    header[t.name] = {{"dtype", "F64"}, {"shape", t.shape}, {"data_offsets", {offset, offset + 8 * numel}}};
    offset += 8 * numel;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::ordered_json::exception& e) {
    internal(std::string("cannot encode the header (tensor names must be UTF-8): ") + e.what());
  }
  text.append((8 - text.size() % 8) % 8, ' ');

  head.clear();
  head.reserve(8 + text.size());
  for (int b = 0; b < 8; ++b) head += static_cast<char>((static_cast<uint64_t>(text.size()) >> (8 * b)) & 0xFF);
  head += text;
  std::vector<io_detail::ByteSpan> pieces{{head.data(), head.size()}};
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  // F64 little-endian is the host's own layout: each tensor's values go out as they are, with no copy
  for (const SafeTensor& t : tensors) pieces.push_back({t.data.data(), 8 * t.data.size()});
#else
  body.clear();
  body.reserve(static_cast<size_t>(offset));
  for (const SafeTensor& t : tensors) {
    for (double v : t.data) {
      uint64_t bits;
      std::memcpy(&bits, &v, 8);
      for (int b = 0; b < 8; ++b) body += static_cast<char>((bits >> (8 * b)) & 0xFF);
    }
  }
  pieces.push_back({body.data(), body.size()});
#endif
  (void)body;
  return pieces;
}

}  // namespace

void write_safetensors(const std::string& path, const std::vector<SafeTensor>& tensors, const std::string& dtype) {
  std::string head, body;
  io_detail::write_file_atomic(path, safetensors_pieces(path, tensors, dtype, head, body));
}

io_detail::StagedFile io_detail::stage_safetensors(const std::string& path, const std::vector<SafeTensor>& tensors) {
  std::string head, body;
  return stage_file(path, safetensors_pieces(path, tensors, "F64", head, body));
}

std::vector<SafeTensor> to_tensors(const ParamStore& store) {
  std::vector<SafeTensor> out;
  out.reserve(store.size());
  for (const Param& p : store.all()) {
    int64_t numel = 1;
    for (int64_t d : p.shape) numel *= d;
    if (numel != static_cast<int64_t>(p.value.size()))
      throw Error("internal: parameter '" + p.name + "' has shape " + shape_text(p.shape) + " but holds " +
                      std::to_string(p.value.size()) + " values",
                  ErrorKind::Internal);
    out.push_back(SafeTensor{p.name, "F64", p.shape, std::vector<double>(p.value.data(), p.value.data() + p.value.size())});
  }
  return out;
}

}  // namespace gradflow
