// Translation of kforge::ErrorException into the package's exception types.
#include "bindings/python/python_errors.hpp"

#include <Python.h>

namespace nb = nanobind;

namespace kforge::python {

namespace {

PyObject* g_error = nullptr;        // kforge.KforgeError(RuntimeError)
PyObject* g_bad_input = nullptr;    // kforge.BadInputError(KforgeError, ValueError)
PyObject* g_unavailable = nullptr;  // kforge.UnavailableError(KforgeError)

PyObject* new_exception(nb::module_& m, const char* name, PyObject* bases) {
  std::string qualified = std::string("kforge.") + name;
  PyObject* type = PyErr_NewException(qualified.c_str(), bases, nullptr);
  if (!type) throw nb::python_error();
  m.attr(name) = nb::handle(type);
  return type;
}

}  // namespace

void bind_errors(nb::module_& m) {
  g_error = new_exception(m, "KforgeError", PyExc_RuntimeError);
  nb::object bad_bases = nb::make_tuple(nb::handle(g_error), nb::handle(PyExc_ValueError));
  g_bad_input = new_exception(m, "BadInputError", bad_bases.ptr());
  g_unavailable = new_exception(m, "UnavailableError", g_error);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const ErrorException& e) {
      const Error& err = e.error();
      PyObject* type = err.code == ErrorCode::kBadInput      ? g_bad_input
                       : err.code == ErrorCode::kUnsupported ? g_unavailable
                                                             : g_error;
      std::string text = err.message;
      // A compile log or other detail follows the one-line message.
      if (!err.context.empty()) text += "\n" + err.context;
      PyErr_SetString(type, text.c_str());
    }
  });
}

void throw_bad_input(std::string message) {
  throw ErrorException(Error::bad_input(std::move(message)));
}

}  // namespace kforge::python
