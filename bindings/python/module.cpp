// The _kforge extension module: kforge's library for Python (the kforge
// package wraps it; docs/python.md).
#include "bindings/python/bindings.hpp"
#include "bindings/python/python_errors.hpp"

NB_MODULE(_kforge, m) {
  m.doc() = "kforge: kernel autotuner (devices, templates, tuning, database, runtime lookup)";
  m.attr("__version__") = KFORGE_VERSION;  // the CMake project's version, which pyproject.toml repeats
  kforge::python::bind_errors(m);
  kforge::python::bind_devices(m);
  kforge::python::bind_database(m);
  kforge::python::bind_lookup(m);
  kforge::python::bind_tune(m);
  kforge::python::bind_report(m);
}
