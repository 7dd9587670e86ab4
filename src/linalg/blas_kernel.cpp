// blas_kernel.cpp — see blas_kernel.hpp. OpenBLAS is asked through dlsym, so the library does not depend on it:
// another BLAS simply lacks the two functions.
#include "linalg/blas_kernel.hpp"

#include <dlfcn.h>

#include <sstream>

namespace gradflow {
namespace {

// OpenBLAS's function `name`: among the libraries loaded after gradflow's code (the program's, or the Python
// module's own, which an interpreter loads privately), else anywhere.
void* openblas_function(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  return f ? f : dlsym(RTLD_DEFAULT, name);
}

std::string find_kernel() {
  using Text = char* (*)();
  const auto corename = reinterpret_cast<Text>(openblas_function("openblas_get_corename"));
  const auto config = reinterpret_cast<Text>(openblas_function("openblas_get_config"));
  if (corename != nullptr && config != nullptr) {
    // the configuration starts "OpenBLAS 0.3.21 DYNAMIC_ARCH ...": its first two words name the library
    std::istringstream words(config() ? config() : "");
    std::string name, version;
    words >> name >> version;
    const char* core = corename();
    return (name.empty() ? std::string("OpenBLAS") : name) + (version.empty() ? "" : " " + version) + " " +
           (core && *core ? core : "unknown");
  }
#ifdef EIGEN_USE_BLAS
  return "BLAS (kernel not known)";
#else
  return "Eigen";
#endif
}

}  // namespace

const std::string& blas_kernel() {
  static const std::string kernel = find_kernel();
  return kernel;
}

}  // namespace gradflow
