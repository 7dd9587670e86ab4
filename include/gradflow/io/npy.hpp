// npy.hpp — NumPy .npy files: float64 writer and checked readers of float and integer arrays (format versions 1.0,
// 2.0, 3.0).
// Format: "\x93NUMPY", major, minor, header length (u16 LE in 1.0, u32 LE in 2.0/3.0), a Python dict
// literal {'descr': '<f8', 'fortran_order': False, 'shape': (r, c), } padded with spaces and '\n', data.
// See docs/formats.md for what is accepted and the exact error messages.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gradflow/core/types.hpp"

namespace gradflow {

// An array read from a .npy file, in C (row-major) order, converted to double.
struct NpyArray {
  std::string path;            // the file it came from (used in error messages)
  std::string descr;           // the file's dtype: "<f8" or "<f4"
  std::vector<int64_t> shape;  // () for a scalar
  std::vector<double> data;    // product(shape) values, all finite
  std::string sha256;          // of the file's bytes (read_npy; "" for an array made in memory)
};

// Writes float64 little-endian, C order, format 1.0, data aligned to 64 bytes. Atomic: writes
// `path.tmp.<pid>` then renames. Throws Error "cannot write 'path': <strerror>; fix: ...".
void write_npy(const std::string& path, const double* data, std::vector<int64_t> shape);
void write_npy(const std::string& path, const Mat& m);  // shape (rows, cols)

// Reads a .npy of dtype '<f8' or '<f4' (converted exactly to double). Every length is checked against
// the file size before use; anything malformed, Fortran-ordered, of another dtype, truncated, with
// trailing bytes or holding NaN/Inf throws a one-line Error naming the file and the problem.
NpyArray read_npy(const std::string& path);

// An integer array (token ids), in C order, exactly as stored.
struct NpyInts {
  std::string path;
  std::string descr;           // "<i8" or "<i4"
  std::vector<int64_t> shape;
  std::vector<int64_t> data;
};
// Reads a .npy of dtype '<i8' (int64) or '<i4' (int32), with every check read_npy makes of the layout; another
// dtype (a float array included) is an Error naming it.
NpyInts read_npy_ints(const std::string& path);

// The array as a (rows, cols) matrix; its shape must be (rows, cols) or (1, rows, cols). Throws Error
// naming the file, `what` (e.g. "input tokens") and both shapes otherwise.
Mat npy_to_matrix(const NpyArray& a, Index rows, Index cols, const std::string& what);

}  // namespace gradflow
