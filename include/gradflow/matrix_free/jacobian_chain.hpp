// jacobian_chain.hpp — J = dx_to/dx_from = B_{to−1} ··· B_from as an operator built from JVPs and VJPs,
// never formed: B_l = dx_{l+1}/dx_l, and when to = L the head (final norm) is included, so x_L ≡ y as in
// the explicit engine's layer_jacobian (P_l = chain(l, L), B_l = chain(l, l+1)).
// Long products are kept in range by exact power-of-two rescaling: an application returns (W, e) with
// J·V = 2^e · W, so gains far beyond 1e±308 stay representable; a NaN/Inf stops with Error(Numeric)
// naming the block and the quantity.
#pragma once
#include <string>

#include "gradflow/core/error.hpp"
#include "gradflow/model/model.hpp"

namespace gradflow {

// A tangent or cotangent stack with its power-of-two scale: the value is 2^exp2 · m.
struct Scaled {
  Mat m;         // (k·n, d): k stacked copies (types.hpp)
  long exp2 = 0;
};

// J = dx_to/dx_from as an operator: what Lanczos (chain_singular.hpp) needs. JacobianChain is the model's own
// JVPs/VJPs on host matrices; DeviceChainOperator (device_chain.hpp) the same chain on a backend's kernels.
class ChainOperator {
 public:
  virtual ~ChainOperator() = default;
  virtual Index tokens() const = 0;     // n
  virtual Index width() const = 0;      // the input's: the state width (d; 2d for two streams)
  virtual Index out_width() const = 0;  // the output's: the state width, or the output y's (d) when to = L
  virtual Index length() const = 0;     // blocks applied per product
  virtual const std::string& what() const = 0;
  Index size() const { return tokens() * width(); }          // columns: n·width
  Index out_size() const { return tokens() * out_width(); }  // rows: n·out_width
  bool square() const { return out_width() == width(); }
  // J·V for V (k·n, width): blocks from..to−1, then the head when to = L.
  virtual Scaled jvp(Scaled v) const = 0;
  // Jᵀ·U for U (k·n, out_width): the head when to = L, then blocks to−1..from.
  virtual Scaled vjp(Scaled u) const = 0;
};

class JacobianChain final : public ChainOperator {
 public:
  // what: the quantity's name for error messages, e.g. "P_3 = dy/dx_3".
  // model and trace: the model and one forward pass of it (Model::forward), whose caches the products linearize at.
  JacobianChain(const Model& model, const Trace& trace, Index from, Index to, std::string what);

  Index from() const { return from_; }
  Index to() const { return to_; }
  Index tokens() const override { return trace_.x[0].rows(); }
  Index width() const override { return trace_.x[0].cols(); }
  Index out_width() const override { return to_ == model_.layers() ? trace_.y.cols() : width(); }
  Index length() const override { return to_ - from_; }
  const std::string& what() const override { return what_; }
  Scaled jvp(Scaled v) const override;
  Scaled vjp(Scaled u) const override;

 private:
  void keep_in_range(Scaled& s, const char* dir, Index block) const;
  const Model& model_;
  const Trace& trace_;
  Index from_, to_;
  std::string what_;
};

// Rescales s.m by a power of two (exact) when its largest entry leaves [2^-256, 2^256]; no-op otherwise.
void rebalance(Scaled& s);
// The exponent e of that power (the stack becomes 2^-e times itself, its scale exp2 grows by e) for a stack whose
// largest |entry| is amax: 0 while amax lies in range, is zero or is not finite. DeviceChain rescales by it too.
int rebalance_exponent(double amax);
// "NaN/Inf in the <dir> of <what> at block <block>|the final norm (block < 0); fix: ..." (Error(Numeric)), the error
// of every chain (JacobianChain's and DeviceChain's) when a product leaves the doubles.
Error chain_nonfinite_error(const char* dir, const std::string& what, Index block);
// "B_l = dx_{l+1}/dx_l", the name of block l's Jacobian in reports and errors.
std::string block_jacobian_name(Index l);
// "P_l = dy/dx_l", the name of the product Jacobian from depth l to the output.
std::string product_jacobian_name(Index l);

}  // namespace gradflow
