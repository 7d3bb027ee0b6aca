# KFORGE_PYTHON: build the Python package's extension module (bindings/python).
# On by default when nanobind is found: through nanobind_DIR, or by asking
# the Python interpreter (`python -m nanobind --cmake_dir`, after
# `pip install nanobind`). Python_EXECUTABLE chooses the interpreter.
find_package(Python 3.9 COMPONENTS Interpreter Development.Module QUIET)
if(Python_FOUND AND NOT nanobind_DIR)
  execute_process(COMMAND "${Python_EXECUTABLE}" -m nanobind --cmake_dir
                  OUTPUT_VARIABLE kforge_nanobind_dir OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE kforge_nanobind_status ERROR_QUIET)
  if(kforge_nanobind_status EQUAL 0)
    set(nanobind_DIR "${kforge_nanobind_dir}" CACHE PATH "nanobind's CMake directory")
  endif()
endif()
if(Python_FOUND)
  find_package(nanobind CONFIG QUIET)
endif()
if(nanobind_FOUND)
  set(kforge_python_default ON)
else()
  set(kforge_python_default OFF)
endif()
option(KFORGE_PYTHON "Build the Python package's extension module (needs nanobind)" ${kforge_python_default})
if(KFORGE_PYTHON AND NOT nanobind_FOUND)
  message(FATAL_ERROR "KFORGE_PYTHON is ON but nanobind was not found for Python "
                      "'${Python_EXECUTABLE}' (pip install nanobind, or set nanobind_DIR)")
endif()
if(NOT KFORGE_PYTHON)
  message(STATUS "kforge: the Python package is not built (nanobind not found; pip install nanobind)")
endif()
