// nlohmann::json as plain Python values (dict, list, str, int, float, bool,
// None): how records, fingerprints and tuning summaries reach Python.
#pragma once

#include <nanobind/nanobind.h>

#include <nlohmann/json.hpp>

namespace kforge::python {

nanobind::object json_to_python(const nlohmann::json& j);

}  // namespace kforge::python
