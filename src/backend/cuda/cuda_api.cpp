// cuda_api.cpp — see cuda_api.hpp. The sonames are the build's (cmake/cuda_backend.cmake: GRADFLOW_CUBLAS_SONAME,
// GRADFLOW_CUSOLVER_SONAME); each is looked up as the dynamic loader does (LD_LIBRARY_PATH, the cache), then in the
// build's CUDA library folder (GRADFLOW_CUDA_LIBDIR).
#include "backend/cuda/cuda_api.hpp"

#include <dlfcn.h>

#include <string>

#include "gradflow/core/error.hpp"

namespace gradflow::cuda {
namespace {

#define GRADFLOW_STR2(x) #x
#define GRADFLOW_STR(x) GRADFLOW_STR2(x)

void* open_library(const char* soname) {
  if (void* h = dlopen(soname, RTLD_NOW | RTLD_GLOBAL)) return h;
  const std::string first = dlerror();
  const std::string in_build = std::string(GRADFLOW_CUDA_LIBDIR) + "/" + soname;
  if (void* h = dlopen(in_build.c_str(), RTLD_NOW | RTLD_GLOBAL)) return h;
  throw Error(std::string("--device cuda: cannot load ") + soname + " (" + first +
              "); fix: put the CUDA toolkit's library folder (with cuBLAS and cuSOLVER) on LD_LIBRARY_PATH, or use "
              "--device cpu");
}

template <class F>
void bind(void* lib, const char* soname, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  if (!f)
    throw Error(std::string("--device cuda: ") + soname + " has no " + name + " (a CUDA older than the build's?); fix: "
                "use the CUDA toolkit gradflow was built with (docs/cuda.md), or --device cpu");
}

Api load() {
  Api a;
  const char* cublas = GRADFLOW_CUBLAS_SONAME;
  const char* cusolver = GRADFLOW_CUSOLVER_SONAME;
  void* b = open_library(cublas);
  void* s = open_library(cusolver);
#define GRADFLOW_BIND_CUBLAS(f) bind(b, cublas, GRADFLOW_STR(f), a.f);
#define GRADFLOW_BIND_CUSOLVER(f) bind(s, cusolver, GRADFLOW_STR(f), a.f);
  GRADFLOW_CUBLAS_FUNCTIONS(GRADFLOW_BIND_CUBLAS)
  GRADFLOW_CUSOLVER_FUNCTIONS(GRADFLOW_BIND_CUSOLVER)
#undef GRADFLOW_BIND_CUBLAS
#undef GRADFLOW_BIND_CUSOLVER
  return a;
}

}  // namespace

const Api& api() {
  static const Api a = load();  // a failed load throws, and the next call tries again
  return a;
}

}  // namespace gradflow::cuda
