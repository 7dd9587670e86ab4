// jacobian.hpp — an explicit Jacobian of a map (n, d_in) -> (n, d_out), kept in its structure:
// token-wise (block diagonal, one (d_out, d_in) block per token: linear layers, activations, norms, FFN)
// or dense (N_out, N_in) with N = n*d (attention mixes tokens). Products keep the cheapest structure:
// tokenwise·tokenwise stays tokenwise, anything with a dense factor becomes dense. Row-major flattening
// as in types.hpp: J[i*d_out + a, j*d_in + b] = dy[i,a] / dx[j,b].
#pragma once
#include <vector>

#include "gradflow/core/types.hpp"

namespace gradflow {

class Jacobian {
 public:
  static Jacobian tokenwise(std::vector<Mat> blocks);      // n blocks, all (d_out, d_in)
  static Jacobian dense(Mat m, Index n_tokens);            // (n*d_out, n*d_in)
  static Jacobian identity(Index n_tokens, Index d);       // tokenwise I
  // A map between states made of streams of width d side by side (ResiDual's pair [x_a | x_d], per token):
  // quadrant q[r][c] (n tokens, d → d, nullptr = 0) maps stream c to stream r. Token-wise when every quadrant is.
  static Jacobian streams(const std::vector<std::vector<const Jacobian*>>& q, Index n_tokens, Index d);

  bool is_tokenwise() const { return tokenwise_; }
  Index tokens() const { return n_; }
  Index rows() const;  // n * d_out
  Index cols() const;  // n * d_in
  Index d_out() const { return rows() / n_; }
  Index d_in() const { return cols() / n_; }
  const std::vector<Mat>& blocks() const { return blocks_; }  // tokenwise only
  const Mat& matrix() const { return dense_; }                 // dense only
  Mat to_dense() const&;
  Mat to_dense() &&;  // a dense Jacobian gives up its matrix instead of copying it

  Jacobian& scale(double s);                // J <- s·J
  Jacobian& add_diagonal(const RowVec& a);  // J <- J + I_n ⊗ diag(a)   (square only)
  Jacobian& add_identity(double s);         // J <- J + s·I
  Jacobian& add(const Jacobian& other);     // J <- J + other            (same shape)

  // Composition: (a * b) is the Jacobian of a ∘ b, i.e. the matrix product a·b.
  friend Jacobian operator*(const Jacobian& a, const Jacobian& b);
  // The same product, written over a dense factor that is given up (square token blocks: a norm or an FFN times an
  // attention Jacobian), one token block at a time through a (d, N) buffer instead of a new (N, N) matrix: the
  // same numbers bit for bit (each block is the same GEMM), without touching fresh pages for every product.
  friend Jacobian operator*(const Jacobian& a, Jacobian&& b);
  friend Jacobian operator*(Jacobian&& a, const Jacobian& b);
  friend Jacobian operator*(Jacobian&& a, Jacobian&& b);

 private:
  bool tokenwise_ = true;
  Index n_ = 0;
  std::vector<Mat> blocks_;
  Mat dense_;
};

}  // namespace gradflow
