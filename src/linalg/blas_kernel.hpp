// blas_kernel.hpp — which BLAS kernels this process's products run on, for the results it writes.
#pragma once
#include <string>

namespace gradflow {

// "OpenBLAS 0.3.21 Haswell": the library, its version and the kernel set it chose for this CPU (or was told by
// OPENBLAS_CORETYPE). Kernel sets differ in the last bits of a product (SkylakeX and Haswell sum a tile's products
// in other orders), so results from two of them are not bit for bit the same (docs/cluster.md). "BLAS (kernel not
// known)" for another BLAS library, "Eigen" when products do not go to a BLAS. Read once.
const std::string& blas_kernel();

}  // namespace gradflow
