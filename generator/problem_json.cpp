#include "generator/problem_json.hpp"

#include <cstdint>

namespace kforge {

nlohmann::json problem_to_json(const Problem& p) {
  return {{"op", p.op},
          {"dims", p.dims},
          {"dtype", dtype_name(p.dtype)},
          {"layout", p.layout.name()},
          {"epilogue", p.epilogue.name()},
          {"attrs", p.attrs}};
}

Result<Problem> problem_from_json(const nlohmann::json& j, const std::string& where) {
  try {
    Problem p;
    p.op = j.at("op").get<std::string>();
    for (const auto& [name, value] : j.at("dims").items()) {
      // get<int64_t> of a float is a plain cast, undefined out of range.
      if (!value.is_number_integer() || (value.is_number_unsigned() && value.get<std::uint64_t>() > INT64_MAX))
        return Error::bad_input(where + ": problem.dims." + name + ": not an integer: " + value.dump());
      p.dims[name] = value.get<std::int64_t>();
    }
    auto dtype = parse_dtype(j.at("dtype").get<std::string>());
    if (!dtype) return Error::bad_input(where + ": bad problem.dtype " + j.at("dtype").dump());
    p.dtype = *dtype;
    auto layout = parse_layout(j.at("layout").get<std::string>());
    if (!layout) return Error::bad_input(where + ": bad problem.layout " + j.at("layout").dump());
    p.layout = *layout;
    KF_TRY_ASSIGN(epilogue, parse_epilogue(j.at("epilogue").get<std::string>()));
    p.epilogue = epilogue;
    p.attrs = j.at("attrs").get<std::map<std::string, std::string>>();
    return p;
  } catch (const nlohmann::json::exception& e) {
    return Error::bad_input(where + ": malformed problem: " + e.what());
  }
}

}  // namespace kforge
