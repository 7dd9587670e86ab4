// rope.cpp — rotary position embedding on [Q | K | V] (see rope.hpp).
#include "gradflow/ops/rope.hpp"

#include <cmath>

#include "gradflow/core/error.hpp"

namespace gradflow::ops {

Index rotary_dim_of(Index head_dim, double fraction) {
  return static_cast<Index>(fraction * static_cast<double>(head_dim));  // as Hugging Face: int(head_dim * fraction)
}

RopeTables rope_tables(Index n, Index heads, Index kv_heads, Index head_dim, Index rotary_dim, double theta) {
  if (rotary_dim < 2 || rotary_dim % 2 != 0 || rotary_dim > head_dim)
    throw Error("internal: rotary dimension " + std::to_string(rotary_dim) + " for head width " +
                    std::to_string(head_dim), ErrorKind::Internal);
  RopeTables t;
  t.heads = heads;
  t.kv_heads = kv_heads;
  t.head_dim = head_dim;
  t.rotary_dim = rotary_dim;
  const Index half = rotary_dim / 2;
  t.cos.resize(n, half);
  t.sin.resize(n, half);
  for (Index i = 0; i < half; ++i) {
    const double inv_freq = std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(rotary_dim));
    for (Index p = 0; p < n; ++p) {
      const double a = static_cast<double>(p) * inv_freq;
      t.cos(p, i) = std::cos(a);
      t.sin(p, i) = std::sin(a);
    }
  }
  return t;
}

Mat rope_forward(const RopeTables& t, const Mat& qkv, bool inverse) {
  const Index n = t.cos.rows(), e = t.head_dim, half = t.rotary_dim / 2, rotated_heads = t.heads + t.kv_heads;
  const double sign = inverse ? -1.0 : 1.0;
  Mat out = qkv;
#pragma omp parallel for schedule(static)
  for (Index r = 0; r < qkv.rows(); ++r) {
    const Index p = r % n;
    for (Index h = 0; h < rotated_heads; ++h) {  // the query heads, then the key heads (contiguous in [Q | K | V])
      const double* x = qkv.data() + r * qkv.cols() + h * e;
      double* y = out.data() + r * out.cols() + h * e;
      for (Index i = 0; i < half; ++i) {
        const double c = t.cos(p, i), s = sign * t.sin(p, i);
        y[i] = x[i] * c - x[i + half] * s;
        y[i + half] = x[i + half] * c + x[i] * s;
      }
    }
  }
  return out;
}

Jacobian rope_jacobian(const RopeTables& t) {
  const Index n = t.cos.rows(), e = t.head_dim, half = t.rotary_dim / 2;
  const Index w = (t.heads + 2 * t.kv_heads) * e;
  std::vector<Mat> blocks(static_cast<size_t>(n), Mat::Identity(w, w));
  for (Index p = 0; p < n; ++p) {
    Mat& b = blocks[static_cast<size_t>(p)];
    for (Index h = 0; h < t.heads + t.kv_heads; ++h)
      for (Index i = 0; i < half; ++i) {
        const Index a = h * e + i, z = a + half;
        b(a, a) = t.cos(p, i);
        b(a, z) = -t.sin(p, i);
        b(z, z) = t.cos(p, i);
        b(z, a) = t.sin(p, i);
      }
  }
  return Jacobian::tokenwise(std::move(blocks));
}

}  // namespace gradflow::ops
