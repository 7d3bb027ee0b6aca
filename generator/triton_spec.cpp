// A Triton manifest split into a source template's manifest and its TritonSpec.
#include "generator/triton_spec.hpp"

#include <algorithm>
#include <set>

#include "generator/backend_traits.hpp"

namespace kforge {

namespace {

using json = nlohmann::json;

constexpr const char* kOptions[] = {"num_warps", "num_stages", "num_ctas", "enable_fp_fusion", "maxnreg",
                                    "waves_per_eu", "matrix_instr_nonkdim", "kpack"};
/// Fields only a Triton manifest has; taken out before the common parser reads the rest.
constexpr const char* kTritonFields[] = {"kind", "arguments", "constexprs", "options", "specialization", "grid"};

Error fail(const std::string& path, const std::string& field, const std::string& what) {
  return Error::bad_input(path + ": " + field + ": " + what);
}

Result<std::optional<Expr>> optional_expr(const json& obj, const char* key, const std::string& path,
                                          const std::string& field) {
  if (!obj.contains(key)) return std::optional<Expr>();
  if (!obj[key].is_string()) return fail(path, field + "." + key, "expected an expression string");
  auto e = Expr::parse(obj[key].get<std::string>());
  if (!e) return fail(path, field + "." + key, e.error().message);
  return std::optional<Expr>(std::move(e).value());
}

/// A workspace entry's own fields: a pointer type, a non-empty element
/// count expression, `zeroed` a bool where given.
Status parse_workspace(const json& a, const std::string& path, const std::string& field, TritonArgument& arg) {
  if (arg.type.empty() || arg.type[0] != '*')
    return fail(path, field + ".type", "'" + arg.type + "': a workspace is a pointer (*fp32, *i32, ...)");
  const json& count = a["workspace"];
  if (!count.is_string()) return fail(path, field + ".workspace", "expected an element count expression, got " + count.dump());
  if (count.get<std::string>().find_first_not_of(" \t\n") == std::string::npos)
    return fail(path, field + ".workspace", "empty: expected an element count (an expression)");
  KF_TRY_ASSIGN(elements, optional_expr(a, "workspace", path, field));
  arg.workspace = std::move(elements);
  if (a.contains("zeroed")) {
    if (!a["zeroed"].is_boolean())
      return fail(path, field + ".zeroed", "expected true or false, got " + a["zeroed"].dump());
    arg.zeroed = a["zeroed"].get<bool>();
  }
  return ok_status();
}

Status parse_argument(const json& a, const std::string& path, const std::string& at, TritonSpec& spec) {
  if (!a.is_object() || !a.contains("name") || !a["name"].is_string() || !a.contains("type") || !a["type"].is_string())
    return fail(path, at, "expected {\"name\": string, \"type\": string, \"bind\", \"value\" or \"workspace\"}");
  TritonArgument arg{a["name"].get<std::string>(), a["type"].get<std::string>(), "", std::nullopt, std::nullopt};
  const std::string field = at + " (" + arg.name + ")";
  if (a.contains("bind") + a.contains("value") + a.contains("workspace") != 1)
    return fail(path, field, "give exactly one of bind, value and workspace");
  if (a.contains("zeroed") && !a.contains("workspace")) return fail(path, field + ".zeroed", "only a workspace is zeroed");
  if (a.contains("workspace")) {
    KF_TRY(parse_workspace(a, path, field, arg));
  } else if (a.contains("bind")) {
    if (!a["bind"].is_string()) return fail(path, at + ".bind", "expected an operator argument's name");
    arg.bind = a["bind"].get<std::string>();
  } else {
    KF_TRY_ASSIGN(value, optional_expr(a, "value", path, at));
    arg.value = std::move(value);
  }
  spec.arguments.push_back(std::move(arg));
  return ok_status();
}

Status parse_arguments(const json& root, const std::string& path, TritonSpec& spec) {
  if (!root.contains("arguments") || !root["arguments"].is_array() || root["arguments"].empty())
    return fail(path, "arguments", "expected a non-empty list of {name, type, bind | value | workspace}");
  const json& args = root["arguments"];
  for (std::size_t i = 0; i < args.size(); ++i)
    KF_TRY(parse_argument(args[i], path, "arguments[" + std::to_string(i) + "]", spec));
  return ok_status();
}

Status parse_specialization(const json& root, const std::string& path, TritonSpec& spec) {
  if (!root.contains("specialization")) return ok_status();
  if (!root["specialization"].is_array()) return fail(path, "specialization", "expected a list");
  const json& hints = root["specialization"];
  for (std::size_t i = 0; i < hints.size(); ++i) {
    const std::string field = "specialization[" + std::to_string(i) + "]";
    const json& h = hints[i];
    if (!h.is_object() || !h.contains("argument") || !h["argument"].is_string())
      return fail(path, field, "expected {\"argument\", \"divisible_by\": 16, \"when\"}");
    if (h.value("divisible_by", 0) != 16) return fail(path, field + ".divisible_by", "only 16 is supported");
    KF_TRY_ASSIGN(when, optional_expr(h, "when", path, field));
    spec.specialization.push_back({h["argument"].get<std::string>(), std::move(when)});
  }
  return ok_status();
}

/// The targets as backends ("cuda:sm_90a" -> "cuda"), each once, in order.
Result<json> backends_of(const json& root, const std::string& path, TritonSpec& spec) {
  if (!root.contains("targets") || !root["targets"].is_array()) return fail(path, "targets", "expected a list");
  json backends = json::array();
  for (const auto& t : root["targets"]) {
    const std::string text = t.is_string() ? t.get<std::string>() : "";
    const auto colon = text.find(':');
    const std::string backend = text.substr(0, colon);
    if (colon == std::string::npos || (!is_backend(backend, BackendId::kCuda) && !is_backend(backend, BackendId::kHip)))
      return fail(path, "targets", "'" + text + "' is not a Triton target (cuda:sm_XY or hip:gfxNNN)");
    spec.targets.push_back(text);
    if (std::find(backends.begin(), backends.end(), backend) == backends.end()) backends.push_back(backend);
  }
  return backends;
}

/// The block: num_warps warps (a parameter, a fixed option, or Triton's 4) of simd_width threads.
std::string block_x(const json& root) {
  for (const auto& p : root.value("parameters", json::array()))
    if (p.value("name", "") == "num_warps") return "num_warps * simd_width";
  const json options = root.value("options", json::object());
  const std::int64_t warps = options.contains("num_warps") ? options["num_warps"].get<std::int64_t>() : 4;
  return std::to_string(warps) + " * simd_width";
}

}  // namespace

bool is_triton_option(const std::string& name) {
  return std::find(std::begin(kOptions), std::end(kOptions), name) != std::end(kOptions);
}

Result<json> split_triton_manifest(const json& root, const std::string& path, TritonSpec& spec) {
  KF_TRY(parse_arguments(root, path, spec));
  KF_TRY(parse_specialization(root, path, spec));
  if (root.contains("constexprs")) {
    if (!root["constexprs"].is_object()) return fail(path, "constexprs", "expected an object {name: value}");
    for (const auto& [name, value] : root["constexprs"].items()) {
      if (!value.is_number_integer() && !value.is_string() && !value.is_boolean())
        return fail(path, "constexprs." + name, "expected an integer or an expression string");
      spec.constexprs[name] = value;
    }
  }
  if (root.contains("options")) {
    if (!root["options"].is_object()) return fail(path, "options", "expected an object {option: value}");
    for (const auto& [name, value] : root["options"].items()) {
      if (!is_triton_option(name)) return fail(path, "options." + name, "not a Triton compile option");
    }
    spec.options = root["options"];
  }
  if (!root.contains("grid") || !root["grid"].is_array() || root["grid"].size() != 3)
    return fail(path, "grid", "expected three expressions (programs along x, y, z)");
  KF_TRY_ASSIGN(backends, backends_of(root, path, spec));

  json common = root;
  for (const char* field : kTritonFields) common.erase(field);
  common["targets"] = backends;
  common["launch"] = {{"block", {block_x(root), "1", "1"}}, {"grid", root["grid"]}};
  json& params = common["parameters"];
  if (params.is_array()) {
    for (auto& p : params) {
      if (!p.is_object() || !p.contains("targets")) continue;
      const std::string name = p.value("name", "");
      for (const auto& b : p["targets"]) spec.parameter_backends[name].push_back(b.is_string() ? b.get<std::string>() : "");
      p.erase("targets");
    }
  }
  return common;
}

}  // namespace kforge
