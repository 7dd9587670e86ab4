// precision_kernels.hpp — the kernels of a model cast to a narrower type (`--precision f32|bf16|f16`, PyTorch's
// `model.to(dtype)`), emulated on the double-precision ones: every value a kernel stores is rounded to the type
// (precision.hpp: round_to); a GEMM rounds its operands to the type, multiplies them in float32 (OpenBLAS's SGEMM:
// a product of two bfloat16 or float16 values is exact in float32, the sums are float32's) and rounds C once, as
// tensor cores and cuBLAS do; the norms, softmax and activations are computed on the double reference from their
// (already rounded) inputs and their outputs rounded to the type, with what a fused PyTorch kernel keeps in float32
// (a norm's x̂ and 1/σ, an activation's derivative) rounded to float32 instead. docs/math.md §16 has the table.
// Autocast (`--autocast bf16|f16`, CUDA autocast's op lists over float32 master weights) needs two sets: one for the
// tensors of the low type (the matrix products' outputs and what is computed from them) and one for float32 tensors
// (the residual stream, the norms, softmax); both round every matrix product to the low type.
#pragma once
#include <memory>

#include "gradflow/kernels/kernel_ops.hpp"
#include "gradflow/kernels/precision.hpp"

namespace gradflow {

// The kernels of `p` over `inner` (host memory: the CPU's kernels). F64 gives `inner`'s bits unchanged (a forwarding
// wrapper). inner must outlive the result.
std::unique_ptr<KernelOps> make_precision_kernels(Precision p, const KernelOps& inner);

// What a low-precision Model runs on, as its constructor takes them: `main` (every pass's kernels) and `branch` (the
// residual branches', autocast only; null for the cast model). Over `inner`, which must outlive them.
struct ModelKernels {
  std::unique_ptr<KernelOps> main, branch;
};
// Autocast to p (bf16 or f16; Error otherwise):
//   branch: the cast regime's kernels of p, but softmax's output rounded to float32 (autocast's float32 list)
//   main:   GEMMs as branch's (operands rounded to p, float32 sums, C rounded to p); every other output float32
ModelKernels make_autocast_kernels(Precision p, const KernelOps& inner);
// The cast model's kernels (make_precision_kernels, no branch set) or autocast's.
ModelKernels make_model_kernels(Precision p, bool autocast, const KernelOps& inner);

}  // namespace gradflow
