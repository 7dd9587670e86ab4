// elementwise.hpp — the element-wise arithmetic between the ops (sums of tangents, scalings, column gains), through
// the kernels like every op (kernel_ops.hpp), on Mats of one shape. Stacked copies allowed where the shape is (k·n, d).
#pragma once
#include "gradflow/core/types.hpp"
#include "gradflow/kernels/cpu_kernels.hpp"

namespace gradflow::ops {

// a + b (a's storage reused).
Mat added(Mat a, const Mat& b, const KernelOps& k = cpu_kernels());
// a + s·b (a's storage reused).
Mat added_scaled(Mat a, double s, const Mat& b, const KernelOps& k = cpu_kernels());
// s·a.
Mat scaled(double s, Mat a, const KernelOps& k = cpu_kernels());
// x ⊙ s with s (1, cols) repeated over the rows: x(r, j)·s_j.
Mat scaled_columns(const Mat& x, const RowVec& s, const KernelOps& k = cpu_kernels());
// a's values as k stores them (a copy through k: rounded to its type under autocast; unchanged by exact kernels).
void cast_to(const KernelOps& k, Mat& a);

}  // namespace gradflow::ops
