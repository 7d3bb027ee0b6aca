// kforge's errors as Python exceptions: every Result that reaches Python
// goes through unwrap(), and an ErrorException becomes KforgeError, or its
// BadInputError / UnavailableError subclass, with the message unchanged.
#pragma once

#include <nanobind/nanobind.h>

#include <utility>

#include "core/result.hpp"

namespace kforge::python {

/// Creates kforge.KforgeError, BadInputError and UnavailableError in `m`
/// and translates ErrorException into them.
void bind_errors(nanobind::module_& m);

/// The value, or an ErrorException carrying the error.
template <typename T>
T unwrap(Result<T> r) {
  if (!r.ok()) throw ErrorException(r.error());
  return std::move(r).value();
}

inline void unwrap(const Status& s) {
  if (!s.ok()) throw ErrorException(s.error());
}

/// Throws a kBadInput ErrorException with `message`.
[[noreturn]] void throw_bad_input(std::string message);

}  // namespace kforge::python
