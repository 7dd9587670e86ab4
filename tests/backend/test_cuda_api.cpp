// test_cuda_api.cpp — a CUDA build loads cuBLAS and cuSOLVER with dlopen (src/backend/cuda/cuda_api.cpp): every
// function the backend calls resolves by the name the CUDA headers give it. Needs the libraries, not a GPU.
#include <catch2/catch.hpp>

#ifdef GRADFLOW_HAVE_CUDA
#include "backend/cuda/cuda_api.hpp"

TEST_CASE("backend: the CUDA build's cuBLAS and cuSOLVER load and every function resolves", "[backend]") {
  const gradflow::cuda::Api& a = gradflow::cuda::api();
#define GRADFLOW_TEST_RESOLVED(f) CHECK(a.f != nullptr);
  GRADFLOW_CUBLAS_FUNCTIONS(GRADFLOW_TEST_RESOLVED)
  GRADFLOW_CUSOLVER_FUNCTIONS(GRADFLOW_TEST_RESOLVED)
#undef GRADFLOW_TEST_RESOLVED
  CHECK(std::string(a.cublasGetStatusString(CUBLAS_STATUS_SUCCESS)).size() > 0);
}
#endif
