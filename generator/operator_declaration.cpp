// Parsing and checking operator.json: every error is "<path>: <field>: <what>", one line.
#include "generator/operator_declaration.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "core/bounded_json.hpp"
#include "core/printable.hpp"
#include "generator/npy_file.hpp"
#include "generator/operator.hpp"
#include "generator/reserved_names.hpp"

namespace kforge {

namespace {

using json = nlohmann::json;

constexpr const char* kTopFields[] = {"schema_version",  "name",       "description", "dims",
                                      "default_problem", "attributes", "arguments",   "flops",
                                      "bytes",           "reference"};
constexpr const char* kArgumentFields[] = {"name", "type",   "role",      "dtype", "count",
                                           "init", "poison", "tolerance", "value"};
constexpr const char* kInitKinds[] = {"uniform", "normal", "integers", "constant", "ramp", "npy"};

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

template <typename Range>
std::string join(const Range& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

/// Builds errors that name the file and the field.
class Fields {
 public:
  Fields(std::string path, std::filesystem::path dir) : path_(std::move(path)), dir_(std::move(dir)) {}

  Error fail(const std::string& field, const std::string& what) const {
    return Error::bad_input(path_ + ": " + field + ": " + what);
  }
  template <std::size_t N>
  Status known_keys(const json& obj, const std::string& where, const char* const (&known)[N]) const {
    for (const auto& item : obj.items()) {
      if (std::none_of(std::begin(known), std::end(known), [&](const char* k) { return item.key() == k; })) {
        return fail(where + printable(item.key()), "unknown field (known: " + join(known) + ")");
      }
    }
    return ok_status();
  }
  Result<std::string> string_at(const json& obj, const std::string& key, const std::string& field,
                                bool required) const {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) return fail(field, "missing (required)");
      return std::string();
    }
    if (!it->is_string()) return fail(field, "expected a string, got " + std::string(it->type_name()));
    return it->get<std::string>();
  }
  Result<double> number_at(const json& obj, const std::string& key, const std::string& field) const {
    auto it = obj.find(key);
    if (it == obj.end()) return fail(field, "missing (required)");
    if (!it->is_number()) return fail(field, "expected a number, got " + std::string(it->type_name()));
    return it->get<double>();
  }
  /// An expression over `names`; an unknown name is an error naming it.
  Result<FieldExpr> expression(const json& j, const std::string& field,
                               const std::vector<std::string>& names) const {
    std::string text;
    if (j.is_number_integer())
      text = std::to_string(j.get<std::int64_t>());
    else if (j.is_string())
      text = j.get<std::string>();
    else
      return fail(field, "expected an integer expression (a string), got " + std::string(j.type_name()));
    auto e = Expr::parse(text);
    if (!e.ok()) return fail(field, "'" + printable(text) + "': " + e.error().message);
    for (const auto& n : e->names()) {
      if (std::find(names.begin(), names.end(), n) == names.end()) {
        return fail(field, "'" + printable(text) + "': position " + std::to_string(e->position_of(n)) +
                               ": unknown name '" + n + "' (known: " + join(names) + ")");
      }
    }
    return FieldExpr{field, std::move(*e)};
  }
  /// A file named relative to the declaration; it must exist.
  Result<std::string> file(const std::string& name, const std::string& field) const {
    const std::filesystem::path p =
        std::filesystem::path(name).is_absolute() ? std::filesystem::path(name) : dir_ / name;
    std::error_code ec;
    if (name.empty() || !std::filesystem::is_regular_file(p, ec)) {
      return fail(field, "'" + printable(name) + "': no such file (" + p.string() + ")");
    }
    return std::filesystem::absolute(p, ec).lexically_normal().string();
  }

 private:
  std::string path_;
  std::filesystem::path dir_;
};

Status parse_dims(const Fields& f, const json& root, OperatorDeclaration& d) {
  auto it = root.find("dims");
  if (it == root.end()) return f.fail("dims", "missing (required: [{\"name\": \"n\"}, ...])");
  if (!it->is_array() || it->empty())
    return f.fail("dims", "expected a non-empty array of {\"name\", \"default\"?}");
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& j = (*it)[i];
    const std::string field = "dims[" + std::to_string(i) + "]";
    if (!j.is_object()) return f.fail(field, "expected an object, got " + std::string(j.type_name()));
    DeclaredDim dim;
    KF_TRY_ASSIGN(name, f.string_at(j, "name", field + ".name", true));
    if (!is_identifier(name)) {
      return f.fail(field + ".name", "'" + printable(name) + "' is not a free identifier");
    }
    if (auto why = reserved_name_reason(name); !why.empty()) {
      return f.fail(field + ".name", "'" + name + "' is reserved: " + why);
    }
    for (const auto& other : d.dims) {
      if (other.name == name) return f.fail(field + ".name", "'" + name + "' is declared twice");
    }
    dim.name = name;
    if (auto def = j.find("default"); def != j.end()) {
      if (!def->is_number_integer() || def->get<std::int64_t>() <= 0) {
        return f.fail(field + ".default", "expected a positive integer, got " + json_excerpt(*def));
      }
      dim.default_value = def->get<std::int64_t>();
    }
    d.dims.push_back(std::move(dim));
  }
  return ok_status();
}

Status parse_default_problem(const Fields& f, const json& root, OperatorDeclaration& d) {
  auto it = root.find("default_problem");
  for (const auto& dim : d.dims) d.default_problem[dim.name] = dim.default_value.value_or(256);
  if (it == root.end()) return ok_status();
  if (!it->is_object()) return f.fail("default_problem", "expected an object of dimension values");
  for (const auto& item : it->items()) {
    const std::string field = "default_problem." + printable(item.key());
    if (d.default_problem.count(item.key()) == 0) {
      return f.fail(field, "not a declared dimension (declared: " + join(d.names()) + ")");
    }
    if (!item.value().is_number_integer() || item.value().get<std::int64_t>() <= 0) {
      return f.fail(field, "expected a positive integer, got " + json_excerpt(item.value()));
    }
    if (item.value().get<std::int64_t>() > std::numeric_limits<std::int32_t>::max()) {
      return f.fail(field, json_excerpt(item.value()) + " does not fit a 32-bit kernel argument");
    }
    d.default_problem[item.key()] = item.value().get<std::int64_t>();
  }
  return ok_status();
}

/// "attributes": [{"name": "sign", "values": ["plus", "minus"], "doc"?}]:
/// names free identifiers, values distinct lower-case identifiers (the
/// generator defines KF_<NAME>_<VALUE>), the first the default.
Status parse_attributes(const Fields& f, const json& root, OperatorDeclaration& d) {
  auto it = root.find("attributes");
  if (it == root.end()) return ok_status();
  if (!it->is_array()) return f.fail("attributes", "expected an array of {\"name\", \"values\", \"doc\"?}");
  const std::vector<std::string> taken = d.names();
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& j = (*it)[i];
    const std::string field = "attributes[" + std::to_string(i) + "]";
    if (!j.is_object()) return f.fail(field, "expected an object, got " + std::string(j.type_name()));
    AttributeSpec a;
    KF_TRY_ASSIGN(name, f.string_at(j, "name", field + ".name", true));
    const bool clash = std::find(taken.begin(), taken.end(), name) != taken.end() ||
                       std::any_of(d.attributes.begin(), d.attributes.end(),
                                   [&](const AttributeSpec& o) { return o.name == name; });
    if (!is_identifier(name) || clash) {
      return f.fail(field + ".name", "'" + printable(name) + "' is not a free identifier");
    }
    if (auto why = reserved_name_reason(name); !why.empty()) {
      return f.fail(field + ".name", "'" + name + "' is reserved: " + why);
    }
    a.name = name;
    auto values = j.find("values");
    if (values == j.end() || !values->is_array() || values->empty()) {
      return f.fail(field + ".values", "expected a non-empty array of names, the first the default");
    }
    for (const auto& v : *values) {
      const std::string text = v.is_string() ? v.get<std::string>() : "";
      const bool lower = std::none_of(text.begin(), text.end(),
                                      [](char c) { return std::isupper(static_cast<unsigned char>(c)); });
      if (!is_identifier(text) || !lower ||
          std::find(a.values.begin(), a.values.end(), text) != a.values.end()) {
        return f.fail(field + ".values", json_excerpt(v) + " is not a new lower-case identifier");
      }
      a.values.push_back(text);
    }
    if (auto macro = attribute_macro_clash(a.name, a.values); !macro.empty()) {
      return f.fail(field + ".name", "'" + a.name + "' is reserved: " + macro);
    }
    KF_TRY_ASSIGN(doc, f.string_at(j, "doc", field + ".doc", false));
    a.doc = doc;
    d.attributes.push_back(std::move(a));
  }
  return ok_status();
}

Result<InputInit> parse_init(const Fields& f, const json& j, const std::string& field) {
  InputInit init;
  if (!j.is_object())
    return f.fail(field, "expected an object with \"kind\", got " + std::string(j.type_name()));
  KF_TRY_ASSIGN(kind, f.string_at(j, "kind", field + ".kind", true));
  auto known =
      std::find_if(std::begin(kInitKinds), std::end(kInitKinds), [&](const char* k) { return kind == k; });
  if (known == std::end(kInitKinds)) {
    return f.fail(field + ".kind",
                  "unknown kind '" + printable(kind) + "' (known: " + join(kInitKinds) + ")");
  }
  init.kind = static_cast<InputInit::Kind>(known - std::begin(kInitKinds));
  using K = InputInit::Kind;
  auto pair = [&](const char* a, const char* b) -> Status {
    KF_TRY_ASSIGN(va, f.number_at(j, a, field + "." + a));
    KF_TRY_ASSIGN(vb, f.number_at(j, b, field + "." + b));
    init.a = va;
    init.b = vb;
    return ok_status();
  };
  switch (init.kind) {
    case K::kUniform:
      KF_TRY(pair("low", "high"));
      break;
    case K::kIntegers:
      KF_TRY(pair("low", "high"));
      break;
    case K::kNormal:
      KF_TRY(pair("mean", "stddev"));
      break;
    case K::kRamp:
      KF_TRY(pair("start", "step"));
      break;
    case K::kConstant: {
      KF_TRY_ASSIGN(v, f.number_at(j, "value", field + ".value"));
      init.a = v;
      break;
    }
    case K::kNpy: {
      KF_TRY_ASSIGN(name, f.string_at(j, "file", field + ".file", true));
      KF_TRY_ASSIGN(path, f.file(name, field + ".file"));
      init.file = path;
      break;
    }
  }
  if ((init.kind == K::kUniform || init.kind == K::kIntegers) && !(init.a < init.b)) {
    return f.fail(field, "low " + json(init.a).dump() + " must be below high " + json(init.b).dump());
  }
  if (init.kind == K::kNormal && !(init.b > 0)) return f.fail(field + ".stddev", "must be positive");
  return init;
}

Result<ToleranceSpec> parse_tolerance_spec(const Fields& f, const json& j, const std::string& field) {
  ToleranceSpec t;
  if (j.is_string()) {
    if (j.get<std::string>() == "exact") return t;
    return f.fail(field, "unknown policy '" + printable(j.get<std::string>()) + "' (known: exact)");
  }
  if (!j.is_object() || j.empty()) {
    return f.fail(field, "expected \"exact\" or an object of abs, rel, ulp, got " + json_excerpt(j));
  }
  for (const auto& item : j.items()) {
    const std::string sub = field + "." + printable(item.key());
    double* slot = item.key() == "abs"   ? &t.abs
                   : item.key() == "rel" ? &t.rel
                   : item.key() == "ulp" ? &t.ulp
                                         : nullptr;
    if (!slot) return f.fail(sub, "unknown field (known: abs, rel, ulp)");
    if (!item.value().is_number() || !(item.value().get<double>() >= 0)) {
      return f.fail(sub, "expected a non-negative number, got " + json_excerpt(item.value()));
    }
    *slot = item.value().get<double>();
  }
  return t;
}

Status parse_tolerance(const Fields& f, const json& arg, const std::string& field, DeclaredArgument& a) {
  auto it = arg.find("tolerance");
  if (it == arg.end()) {
    return f.fail(field + ".tolerance",
                  "missing (required for an output: \"exact\", {\"abs\": A, \"rel\": R} or "
                  "{\"ulp\": U}, or one of them per dtype)");
  }
  const bool per_dtype =
      it->is_object() && !it->empty() &&
      std::all_of(it->begin(), it->end(), [](const json& v) { return v.is_object() || v.is_string(); }) &&
      !it->contains("abs") && !it->contains("rel") && !it->contains("ulp");
  if (!per_dtype) {
    KF_TRY_ASSIGN(t, parse_tolerance_spec(f, *it, field + ".tolerance"));
    a.tolerance[std::nullopt] = t;
    return ok_status();
  }
  for (const auto& item : it->items()) {
    const std::string sub = field + ".tolerance." + printable(item.key());
    std::optional<Dtype> d;
    if (item.key() != "default") {
      d = parse_dtype(item.key());
      if (!d)
        return f.fail(sub, "unknown dtype '" + printable(item.key()) + "' (known: f32, f16, bf16, default)");
    }
    KF_TRY_ASSIGN(t, parse_tolerance_spec(f, item.value(), sub));
    a.tolerance[d] = t;
  }
  return ok_status();
}

Status parse_buffer(const Fields& f, const json& j, const std::vector<std::string>& names,
                    DeclaredArgument& a) {
  const std::string& field = a.field;
  KF_TRY_ASSIGN(role, f.string_at(j, "role", field + ".role", true));
  if (role == "in")
    a.role = BufferRole::kIn;
  else if (role == "out")
    a.role = BufferRole::kOut;
  else if (role == "inout")
    a.role = BufferRole::kInOut;
  else
    return f.fail(field + ".role", "unknown role '" + printable(role) + "' (known: in, out, inout)");
  KF_TRY_ASSIGN(dtype, f.string_at(j, "dtype", field + ".dtype", false));
  if (!dtype.empty() && dtype != "problem") {
    a.dtype = parse_element_dtype(dtype);
    if (!a.dtype) {
      return f.fail(field + ".dtype", "unknown dtype '" + printable(dtype) +
                                          "' (known: " + std::string(element_dtype_names()) + ", problem)");
    }
  }
  auto count = j.find("count");
  if (count == j.end()) return f.fail(field + ".count", "missing (required: an element count expression)");
  KF_TRY_ASSIGN(c, f.expression(*count, field + ".count", names));
  a.count = std::move(c);
  a.poison = a.role == BufferRole::kOut;
  if (auto p = j.find("poison"); p != j.end()) {
    if (!p->is_boolean()) return f.fail(field + ".poison", "expected true or false, got " + json_excerpt(*p));
    a.poison = p->get<bool>();
    if (a.poison && a.role != BufferRole::kOut) {
      return f.fail(field + ".poison",
                    "only an output with role out can be poisoned (this one is " + role + ")");
    }
  }
  if (auto init = j.find("init"); init != j.end()) {
    if (a.poison) return f.fail(field + ".init", "a poisoned output has no initial values");
    KF_TRY_ASSIGN(i, parse_init(f, *init, field + ".init"));
    a.init = i;
  } else if (a.role == BufferRole::kOut) {
    a.init.kind = InputInit::Kind::kConstant;
    a.init.a = 0.0;
  }
  if (a.is_output())
    KF_TRY(parse_tolerance(f, j, field, a));
  else if (j.contains("tolerance"))
    return f.fail(field + ".tolerance", "an input has no tolerance");
  return ok_status();
}

Status parse_scalar(const Fields& f, const json& j, const std::vector<std::string>& names,
                    DeclaredArgument& a) {
  auto v = j.find("value");
  if (v == j.end()) return f.fail(a.field + ".value", "missing (required: an expression or a number)");
  if (a.type == ArgumentType::kFloat32 && v->is_number_float()) {
    a.literal = v->get<double>();
    if (std::isinf(static_cast<float>(a.literal)))
      return f.fail(a.field + ".value", json_excerpt(*v) + " is out of range for an f32 (it would be infinite)");
  } else {
    KF_TRY_ASSIGN(e, f.expression(*v, a.field + ".value", names));
    a.value = std::move(e);
  }
  for (const char* only_buffers : {"role", "dtype", "count", "init", "poison", "tolerance"}) {
    if (j.contains(only_buffers))
      return f.fail(a.field + "." + only_buffers, "a scalar has no " + std::string(only_buffers));
  }
  return ok_status();
}

Status parse_arguments(const Fields& f, const json& root, OperatorDeclaration& d) {
  auto it = root.find("arguments");
  if (it == root.end()) return f.fail("arguments", "missing (required: the kernel's arguments in order)");
  if (!it->is_array() || it->empty()) return f.fail("arguments", "expected a non-empty array");
  const std::vector<std::string> names = d.names();
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& j = (*it)[i];
    DeclaredArgument a;
    a.field = "arguments[" + std::to_string(i) + "]";
    if (!j.is_object()) return f.fail(a.field, "expected an object, got " + std::string(j.type_name()));
    KF_TRY(f.known_keys(j, a.field + ".", kArgumentFields));
    KF_TRY_ASSIGN(name, f.string_at(j, "name", a.field + ".name", true));
    if (!is_identifier(name))
      return f.fail(a.field + ".name", "'" + printable(name) + "' is not an identifier");
    if (d.find_argument(name)) return f.fail(a.field + ".name", "'" + name + "' is declared twice");
    a.name = name;
    KF_TRY_ASSIGN(type, f.string_at(j, "type", a.field + ".type", true));
    if (type == "buffer")
      a.type = ArgumentType::kBuffer;
    else if (type == "i32")
      a.type = ArgumentType::kInt32;
    else if (type == "f32")
      a.type = ArgumentType::kFloat32;
    else
      return f.fail(a.field + ".type", "unknown type '" + printable(type) + "' (known: buffer, i32, f32)");
    KF_TRY(a.type == ArgumentType::kBuffer ? parse_buffer(f, j, names, a) : parse_scalar(f, j, names, a));
    d.arguments.push_back(std::move(a));
  }
  if (std::none_of(d.arguments.begin(), d.arguments.end(),
                   [](const DeclaredArgument& a) { return a.is_output(); })) {
    return f.fail("arguments", "no output (a buffer with role out or inout)");
  }
  return ok_status();
}

Status parse_reference(const Fields& f, const json& root, OperatorDeclaration& d) {
  auto it = root.find("reference");
  if (it == root.end()) {
    return f.fail("reference",
                  "missing (required: {\"library\": FILE, \"symbol\": NAME}, {\"expected\": "
                  "{OUTPUT: FILE.npy}} or {\"template\": DIR, \"config\": NAME})");
  }
  if (!it->is_object()) return f.fail("reference", "expected an object, got " + std::string(it->type_name()));
  ReferenceSpec& r = d.reference;
  if (it->contains("library") + it->contains("expected") + it->contains("template") != 1) {
    return f.fail("reference", "give exactly one of library, expected or template");
  }
  if (it->contains("template")) {
    r.kind = ReferenceSpec::Kind::kTemplate;
    KF_TRY_ASSIGN(dir, f.string_at(*it, "template", "reference.template", true));
    KF_TRY_ASSIGN(manifest, f.file(dir + "/manifest.json", "reference.template"));
    r.template_dir = std::filesystem::path(manifest).parent_path().string();
    KF_TRY_ASSIGN(config, f.string_at(*it, "config", "reference.config", true));
    r.config = config;
    return ok_status();
  }
  if (it->contains("library")) {
    r.kind = ReferenceSpec::Kind::kLibrary;
    KF_TRY_ASSIGN(lib, f.string_at(*it, "library", "reference.library", true));
    KF_TRY_ASSIGN(path, f.file(lib, "reference.library"));
    r.library = path;
    KF_TRY_ASSIGN(symbol, f.string_at(*it, "symbol", "reference.symbol", false));
    if (!symbol.empty()) r.symbol = symbol;
    if (!is_identifier(r.symbol))
      return f.fail("reference.symbol", "'" + printable(r.symbol) + "' is not a C identifier");
    return ok_status();
  }
  r.kind = ReferenceSpec::Kind::kExpected;
  const json& expected = (*it)["expected"];
  if (!expected.is_object())
    return f.fail("reference.expected", "expected an object of output name: FILE.npy");
  for (const auto& a : d.arguments) {
    if (a.type == ArgumentType::kBuffer && a.init.seeded()) {
      return f.fail(a.field + ".init", "input '" + a.name +
                                           "' is drawn from the seed, so expected outputs cannot "
                                           "hold for it (use npy, constant or ramp)");
    }
    if (a.is_output() && !expected.contains(a.name)) {
      return f.fail("reference.expected", "output '" + a.name + "' has no expected file");
    }
  }
  for (const auto& item : expected.items()) {
    const std::string field = "reference.expected." + printable(item.key());
    const DeclaredArgument* a = d.find_argument(item.key());
    if (!a || !a->is_output()) return f.fail(field, "'" + printable(item.key()) + "' is not an output");
    if (!item.value().is_string()) return f.fail(field, "expected a .npy file name");
    KF_TRY_ASSIGN(path, f.file(item.value().get<std::string>(), field));
    r.expected[item.key()] = path;
  }
  return ok_status();
}

/// Every count evaluates to a positive number on the default problem, so a
/// count that can never work is caught when the declaration is loaded.
Status check_default_problem(const Fields& f, OperatorDeclaration& d) {
  Env env;
  for (const auto& [k, v] : d.default_problem) env[k] = v;
  env["dtype_bytes"] = 4;
  for (const auto& a : d.arguments) {
    if (!a.count) continue;
    auto n = a.count->expr.eval(env);
    if (!n.ok()) return f.fail(a.count->field, "'" + a.count->expr.text() + "': " + n.error().message);
    if (*n <= 0) {
      return f.fail(a.count->field, "'" + a.count->expr.text() + "' evaluates to " + std::to_string(*n) +
                                        " on the default problem (an element count must be positive)");
    }
  }
  return ok_status();
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// DIR/operator.json, else the file DIR/manifest.json names in
/// operator_declaration; empty when there is neither.
Result<std::filesystem::path> declaration_path(const std::string& dir) {
  std::error_code ec;
  const std::filesystem::path beside = std::filesystem::path(dir) / "operator.json";
  if (std::filesystem::exists(beside, ec)) return beside;
  const std::filesystem::path manifest = std::filesystem::path(dir) / "manifest.json";
  if (!std::filesystem::exists(manifest, ec)) return std::filesystem::path();
  auto root = parse_json_bounded(read_file(manifest), manifest.string());
  if (!root.ok() || !root->is_object())
    return std::filesystem::path();  // the manifest's own parse reports it
  auto named = root->find("operator_declaration");
  if (named == root->end() || !named->is_string()) return std::filesystem::path();
  const std::filesystem::path path =
      (std::filesystem::path(dir) / named->get<std::string>()).lexically_normal();
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Error::bad_input(manifest.string() + ": operator_declaration: '" +
                            printable(named->get<std::string>()) + "': no such file (" + path.string() + ")");
  }
  return path;
}

}  // namespace

const ToleranceSpec& DeclaredArgument::tolerance_for(Dtype problem) const {
  auto it = tolerance.find(problem);
  if (it == tolerance.end()) it = tolerance.find(std::nullopt);
  static const ToleranceSpec kExact{};
  return it == tolerance.end() ? kExact : it->second;
}

std::vector<std::string> OperatorDeclaration::names() const {
  std::vector<std::string> out;
  for (const auto& d : dims) out.push_back(d.name);
  out.emplace_back("dtype_bytes");
  for (const auto& a : attributes) out.push_back(a.name);
  return out;
}

const DeclaredArgument* OperatorDeclaration::find_argument(std::string_view arg) const {
  for (const auto& a : arguments) {
    if (a.name == arg) return &a;
  }
  return nullptr;
}

Result<OperatorDeclaration> OperatorDeclaration::parse(std::string_view text, const std::string& path) {
  const Fields f(path, std::filesystem::path(path).parent_path());
  KF_TRY_ASSIGN(root, parse_json_bounded(text, path));
  if (!root.is_object())
    return f.fail("(top level)", "expected a JSON object, got " + std::string(root.type_name()));
  OperatorDeclaration d;
  d.path = path;
  d.canonical = root.dump();
  auto version = root.find("schema_version");
  if (version == root.end()) return f.fail("schema_version", "missing (required)");
  if (!version->is_number_integer() || version->get<std::int64_t>() != kOperatorSchemaVersion) {
    return f.fail("schema_version", json_excerpt(*version) +
                                        ": unsupported version (this kforge reads version " +
                                        std::to_string(kOperatorSchemaVersion) + ")");
  }
  KF_TRY(f.known_keys(root, "", kTopFields));
  KF_TRY_ASSIGN(name, f.string_at(root, "name", "name", true));
  if (!is_identifier(name)) return f.fail("name", "'" + printable(name) + "' is not an identifier");
  for (const Operator* op : builtin_operators()) {
    if (op->name() == name) return f.fail("name", "'" + name + "' is a built-in operator");
  }
  d.name = name;
  KF_TRY_ASSIGN(description, f.string_at(root, "description", "description", false));
  d.description = description;
  KF_TRY(parse_dims(f, root, d));
  KF_TRY(parse_default_problem(f, root, d));
  KF_TRY(parse_attributes(f, root, d));
  KF_TRY(parse_arguments(f, root, d));
  for (const char* cost : {"flops", "bytes"}) {
    if (auto it = root.find(cost); it != root.end()) {
      KF_TRY_ASSIGN(e, f.expression(*it, cost, d.names()));
      (std::string_view(cost) == "flops" ? d.flops : d.bytes) = std::move(e);
    }
  }
  KF_TRY(parse_reference(f, root, d));
  KF_TRY(check_default_problem(f, d));
  return d;
}

Result<std::optional<OperatorDeclaration>> OperatorDeclaration::load_dir(const std::string& dir) {
  KF_TRY_ASSIGN(path, declaration_path(dir));
  if (path.empty()) return std::optional<OperatorDeclaration>();
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::bad_input(path.string() + ": operator declaration: cannot open the file");
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  KF_TRY_ASSIGN(d, parse(text, path.string()));
  return std::optional<OperatorDeclaration>(std::move(d));
}

std::string_view argument_type_name(ArgumentType t) {
  switch (t) {
    case ArgumentType::kBuffer:
      return "buffer";
    case ArgumentType::kInt32:
      return "i32";
    case ArgumentType::kFloat32:
      return "f32";
  }
  return "?";
}

std::string_view buffer_role_name(BufferRole r) {
  switch (r) {
    case BufferRole::kIn:
      return "in";
    case BufferRole::kOut:
      return "out";
    case BufferRole::kInOut:
      return "inout";
  }
  return "?";
}

}  // namespace kforge
