// cpu_kernels.hpp — the reference KernelOps (kernel_ops.hpp) on host memory: the CPU backend's kernels and the
// ones every Model starts with (double precision; the model's passes give today's reports bit for bit through them).
#pragma once
#include "gradflow/kernels/kernel_ops.hpp"

namespace gradflow {

const KernelOps& cpu_kernels();

}  // namespace gradflow
