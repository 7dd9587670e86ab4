// cpu_kernel_ops.hpp — the CPU backend's KernelOps (kernel_ops.hpp), private to src/backend/.
#pragma once
#include "gradflow/backend/kernel_ops.hpp"

namespace gradflow {

const KernelOps& cpu_kernel_ops();

}  // namespace gradflow
