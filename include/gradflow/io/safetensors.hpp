// safetensors.hpp — Hugging Face safetensors checkpoints: a checked reader (F64, F32, F16, BF16, all
// converted exactly to double) and an F64 writer. Format: u64 LE header length N, N bytes of JSON
// {"name": {"dtype": "F32", "shape": [r, c], "data_offsets": [begin, end]}, ...}, then the data
// section, tensors in C order, little-endian. See docs/formats.md for every check and message.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gradflow/core/params.hpp"

namespace gradflow {

struct SafeTensor {
  std::string name;            // PyTorch state_dict name, e.g. "layers.0.linear1.weight"
  std::string dtype;           // dtype in the file ("F64", "F32", "F16", "BF16"); ignored by the writer
  std::vector<int64_t> shape;  // PyTorch shape; {} for a 0-d scalar
  std::vector<double> data;    // product(shape) values, C (row-major) order
};

// The raw bytes of a tensor are read through a buffer of at most this size (converted to double as they come).
constexpr uint64_t kSafetensorsReadBufferBytes = uint64_t(1) << 24;

// Reads every tensor, in FILE ORDER (ascending data offset, i.e. the order of the data section).
// The optional "__metadata__" entry (an object of strings) is checked and skipped. Throws a one-line
// Error naming the file, the tensor when there is one, and the problem: malformed header, unsupported
// dtype, bad shape or offsets, overlapping tensors or gaps/trailing bytes in the data section (as the
// reference implementation rejects them), and NaN/Inf values (with the first index).
// The header is read and every check above except the values' is made before any tensor data is read, so a
// garbage file is refused after reading 8 + (header length) bytes. `want` (when given) selects the tensors to
// read by name; the others are checked in the header only and never read.
std::vector<SafeTensor> read_safetensors(const std::string& path,
                                         const std::function<bool(const std::string&)>& want = {});

// The header only, every check of read_safetensors but the values' made: name, dtype and shape of each tensor in
// file order, `data` left empty. Reads 8 + (header length) bytes.
std::vector<SafeTensor> read_safetensors_header(const std::string& path);

// Writes the tensors as F64 (the only `dtype` accepted), laid out contiguously in the given order;
// the header is compact JSON, entries in the given order after {"__metadata__": {"format": "pt"}},
// padded with spaces to a multiple of 8 bytes like the reference writer. Atomic (temp file + rename).
// Throws Error(Internal) on duplicate/empty names or data.size() != product(shape).
void write_safetensors(const std::string& path, const std::vector<SafeTensor>& tensors,
                       const std::string& dtype = "F64");

// Every parameter as an F64 tensor with its PyTorch shape (Param::shape), in the store's order.
std::vector<SafeTensor> to_tensors(const ParamStore& store);

// A shape as messages write it: "[768, 3072]" ("[]" for a scalar).
std::string shape_text(const std::vector<int64_t>& shape);

// Exact conversions of IEEE binary16 and bfloat16 bit patterns (subnormals, ±0, ±Inf, NaN included).
double half_to_double(uint16_t bits);
double bfloat16_to_double(uint16_t bits);

}  // namespace gradflow
