// Recursive conversion of a JSON value into Python objects.
#include "bindings/python/json_to_python.hpp"

namespace nb = nanobind;

namespace kforge::python {

nb::object json_to_python(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      return nb::none();
    case nlohmann::json::value_t::boolean:
      return nb::bool_(j.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return nb::int_(j.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return nb::int_(j.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float:
      return nb::float_(j.get<double>());
    case nlohmann::json::value_t::string:
      return nb::str(j.get_ref<const std::string&>().c_str());
    case nlohmann::json::value_t::array: {
      nb::list out;
      for (const auto& x : j) out.append(json_to_python(x));
      return out;
    }
    case nlohmann::json::value_t::object: {
      nb::dict out;
      for (const auto& [key, value] : j.items()) out[nb::str(key.c_str())] = json_to_python(value);
      return out;
    }
    default:
      return nb::none();  // binary and discarded values do not occur in kforge's JSON
  }
}

}  // namespace kforge::python
