# cuda_backend.cmake — the optional CUDA backend (-DGRADFLOW_CUDA=AUTO|ON|OFF, default AUTO; docs/cuda.md).
# AUTO builds it when check_language(CUDA) finds nvcc and find_package(CUDAToolkit) finds cuBLAS and cuSOLVER; ON
# without them is a configure error; OFF (or AUTO without them) leaves the CPU build and its tests unchanged.
# The host side (src/backend/cuda/*.cpp) is compiled by the C++ compiler; nvcc compiles only the few small
# kernels (src/backend/cuda/*.cu), which include no Eigen, so CI's nvcc time stays short.
string(TOUPPER "${GRADFLOW_CUDA}" _gf_cuda)
if(NOT _gf_cuda MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "GRADFLOW_CUDA='${GRADFLOW_CUDA}': use AUTO, ON or OFF")
endif()
set(GRADFLOW_HAVE_CUDA FALSE)
if(NOT _gf_cuda STREQUAL "OFF")
  # Hopper (H200) unless the caller chose; set before enable_language so CMake does not probe a default.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "CUDA architectures of the kernels (90: H100/H200)")
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  set(_gf_cuda_missing "")
  if(NOT CMAKE_CUDA_COMPILER)
    set(_gf_cuda_missing "nvcc (put it on PATH or set CUDACXX)")
  else()
    find_package(CUDAToolkit QUIET)
    if(NOT CUDAToolkit_FOUND)
      set(_gf_cuda_missing "the CUDA toolkit (find_package(CUDAToolkit))")
    elseif(NOT TARGET CUDA::cublas OR NOT TARGET CUDA::cusolver)
      set(_gf_cuda_missing "cuBLAS/cuSOLVER of the CUDA toolkit in ${CUDAToolkit_LIBRARY_DIR}")
    endif()
  endif()
  if(_gf_cuda_missing STREQUAL "")
    enable_language(CUDA)
    set(GRADFLOW_HAVE_CUDA TRUE)
  elseif(_gf_cuda STREQUAL "ON")
    message(FATAL_ERROR "GRADFLOW_CUDA=ON, but ${_gf_cuda_missing} was not found; fix: install the CUDA toolkit "
                        "(nvcc, cuBLAS, cuSOLVER) or configure with -DGRADFLOW_CUDA=OFF")
  else()
    message(STATUS "gradflow: CUDA backend off (GRADFLOW_CUDA=AUTO: ${_gf_cuda_missing} not found)")
  endif()
endif()

if(GRADFLOW_HAVE_CUDA)
  file(GLOB GRADFLOW_CUDA_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/backend/cuda/*.cpp
                                                    ${PROJECT_SOURCE_DIR}/src/backend/cuda/*.cu)
  target_sources(gradflow_lib PRIVATE ${GRADFLOW_CUDA_SOURCES})
  # The CUDA headers and the definition go to the files that use them only, so every other file compiles with the
  # command line of a CPU build (ccache hits across builds, and a CUDA build recompiles nothing else).
  set_source_files_properties(${GRADFLOW_CUDA_SOURCES} PROPERTIES INCLUDE_DIRECTORIES "${CUDAToolkit_INCLUDE_DIRS}")
  set_source_files_properties(${PROJECT_SOURCE_DIR}/src/backend/backend.cpp PROPERTIES
                              COMPILE_DEFINITIONS GRADFLOW_HAVE_CUDA=1)
  # gradflow_lib was created before enable_language(CUDA), so it did not take the default from the variable
  set_target_properties(gradflow_lib PROPERTIES CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}")
  set(_gf_kernels ${GRADFLOW_CUDA_SOURCES})
  list(FILTER _gf_kernels INCLUDE REGEX "[.]cu$")
  set_source_files_properties(${_gf_kernels} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)  # no Eigen in kernels
  # The runtime statically (nvcc's default; it loads the driver itself). cuBLAS and cuSOLVER are not linked: the
  # backend loads them with dlopen by these sonames when --device cuda asks (src/backend/cuda/cuda_api.cpp), so
  # every other run starts without mapping them. (Link only: the runtime's include folder would otherwise reach
  # every file of the library, see above.)
  foreach(_gf_lib cublas cusolver)
    get_target_property(_gf_loc CUDA::${_gf_lib} IMPORTED_LOCATION)
    file(REAL_PATH "${_gf_loc}" _gf_real)
    get_filename_component(_gf_name "${_gf_real}" NAME)
    string(REGEX MATCH "^lib${_gf_lib}[.]so[.][0-9]+" _gf_soname "${_gf_name}")
    if(NOT _gf_soname)
      message(FATAL_ERROR "gradflow: cannot tell the soname of ${_gf_loc} (${_gf_name})")
    endif()
    string(TOUPPER ${_gf_lib} _gf_up)
    set(GRADFLOW_${_gf_up}_SONAME ${_gf_soname})
  endforeach()
  set_source_files_properties(${PROJECT_SOURCE_DIR}/src/backend/cuda/cuda_api.cpp PROPERTIES COMPILE_DEFINITIONS
      "GRADFLOW_CUBLAS_SONAME=\"${GRADFLOW_CUBLAS_SONAME}\";GRADFLOW_CUSOLVER_SONAME=\"${GRADFLOW_CUSOLVER_SONAME}\";GRADFLOW_CUDA_LIBDIR=\"${CUDAToolkit_LIBRARY_DIR}\"")
  target_link_libraries(gradflow_lib PUBLIC $<LINK_ONLY:CUDA::cudart_static> ${CMAKE_DL_LIBS})
  # warnings as errors for the kernels (nvcc's own and the host compiler's)
  target_compile_options(gradflow_lib PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Wall,-Wextra>)
  message(STATUS "gradflow: CUDA backend on (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures "
                 "${CMAKE_CUDA_ARCHITECTURES}; ${GRADFLOW_CUBLAS_SONAME} and ${GRADFLOW_CUSOLVER_SONAME} loaded at "
                 "run time, built against ${CUDAToolkit_LIBRARY_DIR})")
endif()
