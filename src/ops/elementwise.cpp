// elementwise.cpp — see elementwise.hpp. Each is one kernel call: a + b as axpby(1, b, 1, a) (= b + a, exactly a + b),
// s·a as axpby(s, a, 0, a).
#include "gradflow/ops/elementwise.hpp"

namespace gradflow::ops {

Mat added(Mat a, const Mat& b, const KernelOps& k) {
  k.axpby(a.size(), 1.0, b.data(), 1.0, a.data());
  return a;
}

Mat added_scaled(Mat a, double s, const Mat& b, const KernelOps& k) {
  k.axpby(a.size(), s, b.data(), 1.0, a.data());
  return a;
}

Mat scaled(double s, Mat a, const KernelOps& k) {
  k.axpby(a.size(), s, a.data(), 0.0, a.data());
  return a;
}

void cast_to(const KernelOps& k, Mat& a) { k.axpby(a.size(), 1.0, a.data(), 0.0, a.data()); }

Mat scaled_columns(const Mat& x, const RowVec& s, const KernelOps& k) {
  Mat y(x.rows(), x.cols());
  k.scale_columns(x.data(), s.data(), y.data(), x.rows(), x.cols());
  return y;
}

}  // namespace gradflow::ops
