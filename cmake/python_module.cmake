# python_module.cmake — `import gradflow` (src/python, docs/python.md): the C++ library as a Python extension
# module built with Debian's pybind11 (pybind11-dev, python3-dev) for Debian's interpreter.
#   GRADFLOW_PYTHON=AUTO  build it when pybind11 and the Python headers are found (the default)
#                  ON     require them;  OFF  do not build it
# Python_EXECUTABLE defaults to /usr/bin/python3 (Debian's, with NumPy): another python3 first on PATH may lack it.
# Never in the sanitizer build: an instrumented module cannot be loaded by an uninstrumented interpreter.
# The package is assembled in build/python/gradflow (PYTHONPATH=build/python) and installed with
# `cmake --install build --component python [--prefix P]` into P/lib/python3/dist-packages/gradflow.
set(GRADFLOW_PYTHON AUTO CACHE STRING "the Python module (import gradflow): AUTO | ON | OFF")
set_property(CACHE GRADFLOW_PYTHON PROPERTY STRINGS AUTO ON OFF)
set(GRADFLOW_PYTHON_BUILT FALSE)
if(GRADFLOW_PYTHON STREQUAL "OFF" OR GRADFLOW_SANITIZE OR GRADFLOW_LIBFUZZER)
  if(GRADFLOW_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "gradflow: GRADFLOW_PYTHON=ON cannot be built with GRADFLOW_SANITIZE or GRADFLOW_LIBFUZZER")
  endif()
  message(STATUS "gradflow: Python module: off")
  return()
endif()
if(NOT DEFINED Python_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "the interpreter the Python module is built for")
endif()
find_package(Python 3.9 QUIET COMPONENTS Interpreter Development.Module)
if(Python_FOUND)
  find_package(pybind11 2.6 CONFIG QUIET)
endif()
if(NOT Python_FOUND OR NOT pybind11_FOUND)
  if(GRADFLOW_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "gradflow: GRADFLOW_PYTHON=ON needs pybind11-dev and python3-dev (scripts/install-deps.sh)")
  endif()
  message(STATUS "gradflow: Python module: off (pybind11-dev or python3-dev not found)")
  return()
endif()

set_target_properties(gradflow_lib PROPERTIES POSITION_INDEPENDENT_CODE ON)  # linked into a shared module
pybind11_add_module(gradflow_python MODULE ${PROJECT_SOURCE_DIR}/src/python/module.cpp)
set_target_properties(gradflow_python PROPERTIES OUTPUT_NAME _gradflow
                      LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/python/gradflow)
target_include_directories(gradflow_python PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(gradflow_python PRIVATE gradflow_lib)
target_compile_options(gradflow_python PRIVATE -Wall -Wextra)
# the pure-Python part beside it, copied by the build whenever a file changes (target gradflow_python_files)
file(GLOB GRADFLOW_PYTHON_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/python/gradflow/*.py
     ${PROJECT_SOURCE_DIR}/src/python/gradflow/*.pyi ${PROJECT_SOURCE_DIR}/src/python/gradflow/py.typed)
set(gradflow_python_copies "")
foreach(f ${GRADFLOW_PYTHON_FILES})
  get_filename_component(name ${f} NAME)
  set(copy ${PROJECT_BINARY_DIR}/python/gradflow/${name})
  add_custom_command(OUTPUT ${copy} DEPENDS ${f} COMMAND ${CMAKE_COMMAND} -E copy ${f} ${copy} VERBATIM)
  list(APPEND gradflow_python_copies ${copy})
endforeach()
add_custom_target(gradflow_python_files ALL DEPENDS ${gradflow_python_copies})
add_dependencies(gradflow_python gradflow_python_files)
install(TARGETS gradflow_python LIBRARY DESTINATION lib/python3/dist-packages/gradflow COMPONENT python)
install(FILES ${GRADFLOW_PYTHON_FILES} DESTINATION lib/python3/dist-packages/gradflow COMPONENT python)
set(GRADFLOW_PYTHON_BUILT TRUE)
message(STATUS "gradflow: Python module: on (${Python_EXECUTABLE}, pybind11 ${pybind11_VERSION})")
