// jacobian_chain.cpp — products of block Jacobians through JVP/VJP with power-of-two rescaling
// (see jacobian_chain.hpp).
#include "gradflow/matrix_free/jacobian_chain.hpp"

#include <cmath>

#include "gradflow/core/error.hpp"
#include "gradflow/core/finite.hpp"

namespace gradflow {

int rebalance_exponent(double amax) {
  if (!(amax > 0.0) || !std::isfinite(amax)) return 0;  // zero, or non-finite (caught by the caller)
  int e = 0;
  std::frexp(amax, &e);  // amax = f·2^e, f in [0.5, 1)
  return e > 256 || e < -256 ? e : 0;
}

void rebalance(Scaled& s) {
  const int e = rebalance_exponent(s.m.size() ? s.m.cwiseAbs().maxCoeff() : 0.0);
  if (e != 0) {
    s.m *= std::ldexp(1.0, -e);  // exact: a power of two
    s.exp2 += e;
  }
}

Error chain_nonfinite_error(const char* dir, const std::string& what, Index block) {
  return Error(std::string("NaN/Inf in the ") + dir + " of " + what + " at " +
                   (block < 0 ? std::string("the final norm") : "block " + std::to_string(block)) +
                   "; fix: " + std::string(kNonFiniteFix), ErrorKind::Numeric);
}

std::string block_jacobian_name(Index l) {
  return "B_" + std::to_string(l) + " = dx_" + std::to_string(l + 1) + "/dx_" + std::to_string(l);
}

std::string product_jacobian_name(Index l) { return "P_" + std::to_string(l) + " = dy/dx_" + std::to_string(l); }

JacobianChain::JacobianChain(const Model& model, const Trace& trace, Index from, Index to, std::string what)
    : model_(model), trace_(trace), from_(from), to_(to), what_(std::move(what)) {
  const Index L = model.layers();
  if (from < 0 || to > L || from >= to)
    throw Error("internal: Jacobian chain " + std::to_string(from) + ".." + std::to_string(to) + " outside 0.." +
                    std::to_string(L), ErrorKind::Internal);
}

void JacobianChain::keep_in_range(Scaled& s, const char* dir, Index block) const {
  if (!all_finite(s.m)) throw chain_nonfinite_error(dir, what_, block);
  rebalance(s);
}

Scaled JacobianChain::jvp(Scaled v) const {
  const Model& model = model_;
  for (Index l = from_; l < to_; ++l) {
    v.m = model.block_jvp(l, trace_.blocks[static_cast<size_t>(l)], v.m);
    keep_in_range(v, "JVP", l);
  }
  if (to_ == model.layers()) {
    v.m = model.head_jvp(trace_.head, v.m);
    keep_in_range(v, "JVP", -1);
  }
  return v;
}

Scaled JacobianChain::vjp(Scaled u) const {
  const Model& model = model_;
  if (to_ == model.layers()) {
    u.m = model.head_vjp(trace_.head, u.m, nullptr);
    keep_in_range(u, "VJP", -1);
  }
  for (Index l = to_ - 1; l >= from_; --l) {
    u.m = model.block_vjp(l, trace_.blocks[static_cast<size_t>(l)], u.m, nullptr);
    keep_in_range(u, "VJP", l);
  }
  return u;
}

}  // namespace gradflow
