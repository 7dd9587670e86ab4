// glu.cpp — h = act(z1) ⊙ z3 and its derivatives (see glu.hpp), through the kernels `k`.
#include "gradflow/ops/glu.hpp"

#include "gradflow/ops/elementwise.hpp"

namespace gradflow::ops {

Mat glu_forward(Activation f, const Mat& z1, const Mat& z3, GluCache& c, const KernelOps& k) {
  c.gate = activation_forward(f, z1, k);
  c.up_fprime = activation_jvp(activation_derivative(f, z1, k), z3, k);  // z3 ⊙ act'(z1)
  return activation_jvp(c.gate, z3, k);                                  // act(z1) ⊙ z3
}

std::pair<Mat, Mat> glu_vjp(const GluCache& c, const Mat& dh, const KernelOps& k) {
  // in the forward pass this was: h = act(z1) ⊙ z3  =>  dz1 = dh ⊙ z3 ⊙ act'(z1), dz3 = dh ⊙ act(z1)
  return {activation_vjp(c.up_fprime, dh, k), activation_vjp(c.gate, dh, k)};
}

Mat glu_jvp(const GluCache& c, const Mat& dz1, const Mat& dz3, const KernelOps& k) {
  return added(activation_jvp(c.up_fprime, dz1, k), activation_jvp(c.gate, dz3, k), k);
}

std::pair<Jacobian, Jacobian> glu_jacobians(const GluCache& c) {
  return {activation_jacobian(c.up_fprime), activation_jacobian(c.gate)};
}

}  // namespace gradflow::ops
