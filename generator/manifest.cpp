// Manifest parsing and checking: every error is "<path>: <field>: <what>", one line.
#include "generator/manifest.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "core/bounded_json.hpp"
#include "core/printable.hpp"
#include "generator/backend_traits.hpp"
#include "generator/device_limits.hpp"
#include "generator/operator.hpp"
#include "generator/reserved_names.hpp"
#include "generator/triton_spec.hpp"

namespace kforge {

namespace {

using json = nlohmann::json;

constexpr const char* kTopFields[] = {"schema_version",
                                      "name",
                                      "operator",
                                      "description",
                                      "source",
                                      "kernel",
                                      "targets",
                                      "arch_guard",
                                      "dtypes",
                                      "layouts",
                                      "parameters",
                                      "constraints",
                                      "envelope",
                                      "launch",
                                      "local_memory_bytes",
                                      "operator_declaration",
                                      "library",
                                      "kind"};
constexpr const char* kParameterFields[] = {"name", "values", "default", "doc"};
constexpr const char* kLaunchFields[] = {"block", "grid"};
constexpr const char* kLibraries[] = {"clblast", "cublaslt", "hipblaslt"};

std::string join_ints(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

template <typename Range>
std::string join_names(const Range& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

std::string join_backend_names() {
  std::string s;
  for (const BackendTraits& b : all_backends()) s += (s.empty() ? "" : ", ") + std::string(b.name);
  return s;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

/// A relative path of plain characters: it lands in a `#line` directive and is
/// joined to the manifest's directory, so no quotes, no absolute paths, no "..".
bool is_safe_relative_path(std::string_view s) {
  if (s.empty() || s[0] == '/') return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '/')) {
      return false;
    }
  }
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t end = s.find('/', pos);
    if (end == std::string_view::npos) end = s.size();
    std::string_view part = s.substr(pos, end - pos);
    if (part.empty() || part == "." || part == "..") return false;
    pos = end + 1;
  }
  return true;
}

bool as_int(const json& j, std::int64_t& out) {
  if (j.is_number_unsigned()) {
    auto u = j.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return false;
    out = static_cast<std::int64_t>(u);
    return true;
  }
  if (j.is_number_integer()) {
    out = j.get<std::int64_t>();
    return true;
  }
  return false;
}

/// Builds errors that name the manifest file and the field.
class Checker {
 public:
  explicit Checker(const std::string& path) : path_(path) {}

  Error fail(const std::string& field, const std::string& what) const {
    return Error::bad_input(path_ + ": " + field + ": " + what);
  }
  Error wrong_type(const std::string& field, const std::string& expected, const json& j) const {
    return fail(field, "expected " + expected + ", got " + std::string(j.type_name()));
  }

  /// Rejects keys outside `known`, suggesting the nearest known key for a typo.
  template <std::size_t N>
  Status known_keys(const json& obj, const std::string& where, const char* const (&known)[N]) const {
    for (const auto& item : obj.items()) {
      const std::string& key = item.key();
      if (std::find_if(std::begin(known), std::end(known), [&](const char* k) { return key == k; }) !=
          std::end(known)) {
        continue;
      }
      std::string hint;
      for (const char* k : known) {
        if (edit_distance(key, k) <= 2) hint = " (did you mean '" + std::string(k) + "'?)";
      }
      std::string what = "unknown field '" + printable(key) + "'" + hint;
      if (where.empty()) return Error::bad_input(path_ + ": " + what);
      return fail(where, what);
    }
    return ok_status();
  }

  Result<std::string> string_field(const json& obj, const char* key, bool required) const {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) return fail(key, "missing (required)");
      return std::string();
    }
    if (!it->is_string()) return wrong_type(key, "a string", *it);
    return it->get<std::string>();
  }

  /// An array of strings; `non_empty` rejects []. Missing is an error only when required.
  Result<std::vector<std::string>> string_array(const json& obj, const std::string& key, bool required,
                                                bool non_empty) const {
    std::vector<std::string> out;
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) return fail(key, "missing (required)");
      return out;
    }
    const std::string expected = non_empty ? "a non-empty array of strings" : "an array of strings";
    if (!it->is_array()) return wrong_type(key, expected, *it);
    if (non_empty && it->empty()) return fail(key, "expected " + expected + ", got []");
    for (std::size_t i = 0; i < it->size(); ++i) {
      const json& e = (*it)[i];
      const std::string field = key + "[" + std::to_string(i) + "]";
      if (!e.is_string()) return wrong_type(field, "a string", e);
      auto s = e.get<std::string>();
      if (std::find(out.begin(), out.end(), s) != out.end()) {
        return fail(field, "'" + printable(s) + "' is listed twice");
      }
      out.push_back(std::move(s));
    }
    return out;
  }

  Result<FieldExpr> expression(const json& j, const std::string& field) const {
    if (!j.is_string()) return wrong_type(field, "an expression string", j);
    auto e = Expr::parse(j.get<std::string>());
    if (!e) return fail(field, e.error().message);
    return FieldExpr{field, std::move(e).value()};
  }

  Result<std::vector<FieldExpr>> expression_array(const json& obj, const std::string& key) const {
    std::vector<FieldExpr> out;
    auto it = obj.find(key);
    if (it == obj.end()) return out;
    if (!it->is_array()) return wrong_type(key, "an array of expression strings", *it);
    for (std::size_t i = 0; i < it->size(); ++i) {
      KF_TRY_ASSIGN(e, expression((*it)[i], key + "[" + std::to_string(i) + "]"));
      out.push_back(std::move(e));
    }
    return out;
  }

 private:
  const std::string& path_;
};

Result<json> parse_json(std::string_view text, const std::string& path) {
  // nlohmann keeps the last of two equal keys silently; a repeated key in a
  // manifest is almost always a mistake, so it is reported.
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  json::parser_callback_t track = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) open_objects.emplace_back();
    if (event == json::parse_event_t::object_end && !open_objects.empty()) open_objects.pop_back();
    if (event == json::parse_event_t::key && !open_objects.empty() && duplicate.empty() &&
        parsed.is_string() && !open_objects.back().insert(parsed.get<std::string>()).second) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  KF_TRY_ASSIGN(root, parse_json_bounded(text, path, track));
  if (!duplicate.empty()) {
    return Error::bad_input(path + ": " + printable(duplicate) + ": field appears twice in one object");
  }
  if (!root.is_object()) {
    return Error::bad_input(path + ": expected a JSON object at the top level, got " +
                            std::string(root.type_name()));
  }
  return root;
}

Status parse_schema_version(const Checker& c, const json& root, TemplateManifest& m) {
  auto it = root.find("schema_version");
  if (it == root.end()) return c.fail("schema_version", "missing (required)");
  std::int64_t v = 0;
  if (!as_int(*it, v)) return c.wrong_type("schema_version", "an integer", *it);
  const std::string reads = " (this kforge reads version " + std::to_string(kManifestSchemaVersion) + ")";
  if (v > kManifestSchemaVersion) {
    return c.fail("schema_version", std::to_string(v) + ": written for a newer kforge" + reads);
  }
  if (v != kManifestSchemaVersion) {
    return c.fail("schema_version", std::to_string(v) + ": unsupported version" + reads);
  }
  m.schema_version = static_cast<int>(v);
  return ok_status();
}

/// A library template (docs/vendor-libraries.md) names a known library and
/// has no source: its entry point is a library call, named after the template.
Status parse_library(const Checker& c, const json& root, std::string name, std::string op,
                     std::string description, std::string library, TemplateManifest& m) {
  if (std::find(std::begin(kLibraries), std::end(kLibraries), library) == std::end(kLibraries)) {
    return c.fail("library",
                  "unknown library '" + printable(library) + "' (known: " + join_names(kLibraries) + ")");
  }
  for (const char* field : {"source", "kernel"}) {
    if (root.contains(field)) return c.fail(field, "a library template has no kernel source");
  }
  m.name = std::move(name);
  m.op = std::move(op);
  m.description = std::move(description);
  m.kernel = m.name;
  m.library = std::move(library);
  return ok_status();
}

/// `kind`, checked against `library`: a library template names its library,
/// a source template names none.
Result<TemplateKindId> parse_kind(const Checker& c, const json& root) {
  KF_TRY_ASSIGN(text, c.string_field(root, "kind", false));
  if (!root.contains("kind")) return root.contains("library") ? TemplateKindId::kLibrary : TemplateKindId::kSource;
  auto kind = parse_template_kind(text);
  if (!kind) return c.fail("kind", "unknown template kind '" + printable(text) + "' (known: source, library, triton)");
  if (*kind == TemplateKindId::kLibrary && !root.contains("library"))
    return c.fail("library", "a template of kind 'library' names its library (clblast, cublaslt, hipblaslt)");
  if (*kind == TemplateKindId::kSource && root.contains("library"))
    return c.fail("library", "a template of kind 'source' calls no library (kind 'library' does)");
  return *kind;
}

Status parse_identity(const Checker& c, const json& root, TemplateManifest& m) {
  KF_TRY_ASSIGN(name, c.string_field(root, "name", true));
  if (!is_identifier(name)) return c.fail("name", "'" + printable(name) + "' is not an identifier");
  KF_TRY_ASSIGN(op, c.string_field(root, "operator", true));
  if (find_operator(op) == nullptr) {
    std::vector<std::string> known;
    for (const Operator* o : all_operators()) known.emplace_back(o->name());
    return c.fail("operator", "unknown operator '" + printable(op) + "' (known: " + join_names(known) + ")");
  }
  KF_TRY_ASSIGN(description, c.string_field(root, "description", false));
  // Read by OperatorDeclaration::load_dir; here only its form is checked.
  KF_TRY_ASSIGN(declaration, c.string_field(root, "operator_declaration", false));
  // Unlike `source` it may climb out of the directory ("../saxpy.json"):
  // several templates' directories share one declaration.
  const bool plain = std::all_of(declaration.begin(), declaration.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.' || ch == '/';
  });
  if (root.contains("operator_declaration") && (declaration.empty() || declaration[0] == '/' || !plain)) {
    return c.fail(
        "operator_declaration",
        "'" + printable(declaration) + "' must be a relative path of letters, digits, '_', '-', '.' and '/'");
  }
  KF_TRY_ASSIGN(kind, parse_kind(c, root));
  m.kind = kind;
  KF_TRY_ASSIGN(library, c.string_field(root, "library", false));
  if (kind == TemplateKindId::kLibrary)
    return parse_library(c, root, std::move(name), std::move(op), std::move(description), std::move(library),
                         m);
  KF_TRY_ASSIGN(source, c.string_field(root, "source", true));
  if (!is_safe_relative_path(source)) {
    return c.fail("source", "'" + printable(source) +
                                "' must be a relative path of letters, digits, '_', '-', '.' "
                                "and '/', without '..'");
  }
  KF_TRY_ASSIGN(kernel, c.string_field(root, "kernel", true));
  if (!is_identifier(kernel)) return c.fail("kernel", "'" + printable(kernel) + "' is not an identifier");
  m.name = std::move(name);
  m.op = std::move(op);
  m.description = std::move(description);
  m.source = std::move(source);
  m.kernel = std::move(kernel);
  return ok_status();
}

Status parse_support(const Checker& c, const json& root, TemplateManifest& m) {
  KF_TRY_ASSIGN(targets, c.string_array(root, "targets", true, true));
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (!find_backend(targets[i])) {
      return c.fail("targets[" + std::to_string(i) + "]",
                    "unknown target '" + printable(targets[i]) + "' (known: " + join_backend_names() + ")");
    }
  }
  KF_TRY_ASSIGN(guard, c.string_array(root, "arch_guard", false, false));
  for (std::size_t i = 0; i < guard.size(); ++i) {
    if (guard[i].empty()) return c.fail("arch_guard[" + std::to_string(i) + "]", "empty string");
  }
  KF_TRY_ASSIGN(dtypes, c.string_array(root, "dtypes", true, true));
  for (std::size_t i = 0; i < dtypes.size(); ++i) {
    auto d = parse_dtype(dtypes[i]);
    if (!d) {
      return c.fail("dtypes[" + std::to_string(i) + "]",
                    "unknown dtype '" + printable(dtypes[i]) + "' (known: f32, f16, bf16)");
    }
    m.dtypes.push_back(*d);
  }
  KF_TRY_ASSIGN(layouts, c.string_array(root, "layouts", true, true));
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    auto l = parse_layout(layouts[i]);
    if (!l) {
      return c.fail("layouts[" + std::to_string(i) + "]",
                    "unknown layout '" + printable(layouts[i]) + "' (known: NN, NT, TN, TT)");
    }
    m.layouts.push_back(*l);
  }
  m.targets = std::move(targets);
  m.arch_guard = std::move(guard);
  return ok_status();
}

Result<Parameter> parse_parameter(const Checker& c, const json& j, const std::string& field,
                                  const Operator& op) {
  if (!j.is_object()) return c.wrong_type(field, "an object", j);
  KF_TRY(c.known_keys(j, field, kParameterFields));
  Parameter p;
  auto name = j.find("name");
  if (name == j.end()) return c.fail(field + ".name", "missing (required)");
  if (!name->is_string()) return c.wrong_type(field + ".name", "a string", *name);
  p.name = name->get<std::string>();
  if (!is_valid_parameter_name(p.name)) {
    return c.fail(field + ".name", "'" + printable(p.name) + "' is not a parameter name (" +
                                       std::string(kParameterNameRule) + ")");
  }
  if (auto why = reserved_name_reason(p.name); !why.empty()) {
    return c.fail(field + ".name", "'" + p.name + "' is reserved: " + why);
  }
  std::vector<std::string> op_names = op.dims();
  for (auto& n : op.extra_names()) op_names.push_back(n);
  if (std::find(op_names.begin(), op_names.end(), p.name) != op_names.end()) {
    return c.fail(field + ".name",
                  "'" + p.name + "' is already a name of operator " + std::string(op.name()));
  }
  auto values = j.find("values");
  const std::string vfield = field + ".values";
  if (values == j.end()) return c.fail(vfield, "missing (required)");
  if (!values->is_array() || values->empty()) {
    if (values->is_array()) return c.fail(vfield, "expected a non-empty array of integers, got []");
    return c.wrong_type(vfield, "a non-empty array of integers", *values);
  }
  for (std::size_t i = 0; i < values->size(); ++i) {
    const std::string efield = vfield + "[" + std::to_string(i) + "]";
    std::int64_t v = 0;
    if (!as_int((*values)[i], v)) {
      return c.wrong_type(efield, "a non-negative 64-bit integer", (*values)[i]);
    }
    if (v < 0) return c.fail(efield, std::to_string(v) + " is negative");
    if (std::find(p.values.begin(), p.values.end(), v) != p.values.end()) {
      return c.fail(efield, std::to_string(v) + " appears twice");
    }
    p.values.push_back(v);
  }
  auto def = j.find("default");
  if (def == j.end()) return c.fail(field + ".default", "missing (required)");
  if (!as_int(*def, p.default_value)) return c.wrong_type(field + ".default", "an integer", *def);
  if (std::find(p.values.begin(), p.values.end(), p.default_value) == p.values.end()) {
    return c.fail(field + ".default",
                  std::to_string(p.default_value) + " is not among values " + join_ints(p.values));
  }
  auto doc = j.find("doc");
  if (doc != j.end()) {
    if (!doc->is_string()) return c.wrong_type(field + ".doc", "a string", *doc);
    p.doc = doc->get<std::string>();
  }
  return p;
}

Status parse_parameters(const Checker& c, const json& root, const Operator& op, TemplateManifest& m) {
  auto it = root.find("parameters");
  if (it == root.end()) return c.fail("parameters", "missing (required)");
  if (!it->is_array()) return c.wrong_type("parameters", "a non-empty array of objects", *it);
  if (it->empty()) return c.fail("parameters", "expected a non-empty array of objects, got []");
  for (std::size_t i = 0; i < it->size(); ++i) {
    const std::string field = "parameters[" + std::to_string(i) + "]";
    KF_TRY_ASSIGN(p, parse_parameter(c, (*it)[i], field, op));
    for (std::size_t k = 0; k < m.parameters.size(); ++k) {
      if (m.parameters[k].name == p.name) {
        return c.fail(field + ".name",
                      "'" + p.name + "' is declared twice (first at parameters[" + std::to_string(k) + "])");
      }
    }
    m.parameters.push_back(std::move(p));
  }
  return ok_status();
}

Status parse_expressions(const Checker& c, const json& root, TemplateManifest& m) {
  KF_TRY_ASSIGN(constraints, c.expression_array(root, "constraints"));
  KF_TRY_ASSIGN(envelope, c.expression_array(root, "envelope"));
  m.constraints = std::move(constraints);
  m.envelope = std::move(envelope);

  auto launch = root.find("launch");
  if (launch == root.end()) return c.fail("launch", "missing (required)");
  if (!launch->is_object()) return c.wrong_type("launch", "an object with block and grid", *launch);
  KF_TRY(c.known_keys(*launch, "launch", kLaunchFields));
  for (const char* key : kLaunchFields) {
    const std::string field = std::string("launch.") + key;
    auto it = launch->find(key);
    if (it == launch->end()) return c.fail(field, "missing (required)");
    if (!it->is_array() || it->size() != 3) {
      if (it->is_array()) {
        return c.fail(field, "expected 3 expressions (x, y, z), got " + std::to_string(it->size()));
      }
      return c.wrong_type(field, "an array of 3 expression strings", *it);
    }
    auto& dest = std::string_view(key) == "block" ? m.block : m.grid;
    for (std::size_t i = 0; i < 3; ++i) {
      KF_TRY_ASSIGN(e, c.expression((*it)[i], field + "[" + std::to_string(i) + "]"));
      dest[i] = std::move(e);
    }
  }
  auto lm = root.find("local_memory_bytes");
  if (lm != root.end()) {
    KF_TRY_ASSIGN(e, c.expression(*lm, "local_memory_bytes"));
    m.local_memory_bytes = std::move(e);
  }
  return ok_status();
}

std::vector<const FieldExpr*> all_expressions(const TemplateManifest& m) {
  std::vector<const FieldExpr*> out;
  for (const auto& e : m.constraints) out.push_back(&e);
  for (const auto& e : m.envelope) out.push_back(&e);
  for (const auto& e : m.block) out.push_back(&e);
  for (const auto& e : m.grid) out.push_back(&e);
  if (m.local_memory_bytes) out.push_back(&*m.local_memory_bytes);
  return out;
}

Status check_names(const Checker& c, const TemplateManifest& m, const Operator& op) {
  std::set<std::string, std::less<>> allowed;
  for (const auto& p : m.parameters) allowed.insert(p.name);
  for (auto& n : op.dims()) allowed.insert(n);
  for (auto& n : op.extra_names()) allowed.insert(n);
  for (const char* n : kDeviceLimitNames) allowed.insert(n);
  for (const FieldExpr* fe : all_expressions(m)) {
    for (const std::string& name : fe->expr.names()) {
      if (allowed.count(name) == 0) {
        return c.fail(fe->field, "position " + std::to_string(fe->expr.position_of(name)) +
                                     ": unknown name '" + name + "'");
      }
    }
  }
  return ok_status();
}

/// The default configuration must work on the probe problem (every dim 256,
/// batch 1, first dtype and layout) under the baseline device limits.
Status check_default(const Checker& c, const TemplateManifest& m, const Operator& op) {
  Problem probe;
  probe.op = std::string(op.name());
  for (const auto& d : op.dims()) probe.dims[d] = d == "batch" ? 1 : 256;
  probe.dtype = m.dtypes.front();
  probe.layout = m.layouts.front();
  auto normalized = op.normalize(probe);
  if (!normalized) {
    // A declared operator of fixed problems (.npy data) takes only its own.
    probe.dims = op.default_dims();
    normalized = op.normalize(probe);
  }
  // Data sized for another problem than the default: the default
  // configuration is checked on the problem tuned, which normalize checks
  // against the data there.
  if (!normalized && op.fixed_data()) return ok_status();
  if (!normalized) {
    return Error::internal(m.path + ": probe problem rejected by operator " + std::string(op.name()) + ": " +
                           normalized.error().message);
  }
  const DeviceLimits limits = DeviceLimits::baseline();
  Env env;
  limits.add_to(env);
  op.add_to(env, normalized.value());
  const Config def = m.default_config();
  for (const auto& [name, value] : def.values) env[name] = value;
  const std::string cfg = def.canonical_name();
  const std::string where =
      " (default configuration " + cfg + " on the probe problem " + normalized->key() + ")";

  auto eval = [&](const FieldExpr& fe) -> Result<std::int64_t> {
    auto v = fe.expr.eval(env);
    if (!v) return c.fail(fe.field, v.error().message + where);
    return v;
  };
  for (const auto& fe : m.constraints) {
    KF_TRY_ASSIGN(v, eval(fe));
    if (v == 0) {
      bool problem_dependent =
          std::any_of(fe.expr.names().begin(), fe.expr.names().end(),
                      [&](const std::string& n) { return m.find_parameter(n) == nullptr; });
      return c.fail(fe.field, "default configuration " + cfg + " breaks '" + printable(fe.expr.text()) + "'" +
                                  (problem_dependent ? " on the probe problem " + normalized->key() +
                                                           " with baseline device limits"
                                                     : ""));
    }
  }
  for (const auto& fe : m.envelope) KF_TRY(eval(fe));  // need not hold, must evaluate
  std::int64_t threads = 1;
  for (const auto* dims : {&m.block, &m.grid}) {
    for (const auto& fe : *dims) {
      KF_TRY_ASSIGN(v, eval(fe));
      if (v < 1) {
        return c.fail(fe.field, "default configuration " + cfg + " gives " + std::to_string(v) +
                                    " on the probe problem; must be >= 1");
      }
      if (dims == &m.block && __builtin_mul_overflow(threads, v, &threads)) {
        threads = std::numeric_limits<std::int64_t>::max();
      }
    }
  }
  if (threads > limits.max_block_threads) {
    return c.fail("launch.block", "default configuration " + cfg + " uses " + std::to_string(threads) +
                                      " threads per block, more than the baseline limit " +
                                      std::to_string(limits.max_block_threads));
  }
  if (m.local_memory_bytes) {
    KF_TRY_ASSIGN(bytes, eval(*m.local_memory_bytes));
    if (bytes < 0) {
      return c.fail("local_memory_bytes", "default configuration " + cfg + " gives " + std::to_string(bytes));
    }
    if (bytes > limits.local_mem_bytes) {
      return c.fail("local_memory_bytes", "default configuration " + cfg + " uses " + std::to_string(bytes) +
                                              " bytes, more than the baseline limit " +
                                              std::to_string(limits.local_mem_bytes));
    }
  }
  return ok_status();
}

}  // namespace

std::string_view name(TemplateKindId kind) {
  switch (kind) {
    case TemplateKindId::kSource: return "source";
    case TemplateKindId::kLibrary: return "library";
    case TemplateKindId::kTriton: return "triton";
  }
  return "source";
}

std::optional<TemplateKindId> parse_template_kind(std::string_view text) {
  for (TemplateKindId kind : {TemplateKindId::kSource, TemplateKindId::kLibrary, TemplateKindId::kTriton}) {
    if (name(kind) == text) return kind;
  }
  return std::nullopt;
}

namespace {

/// The fields of `root`, a source or library template's manifest. The
/// default configuration is probed unless `probe_default` is false.
Result<TemplateManifest> parse_root(const json& root, const std::string& path, bool probe_default) {
  const Checker c(path);
  TemplateManifest m;
  m.path = path;
  // The version first: a newer manifest may use fields this kforge does not know.
  KF_TRY(parse_schema_version(c, root, m));
  KF_TRY(c.known_keys(root, "", kTopFields));
  KF_TRY(parse_identity(c, root, m));
  const Operator& op = *find_operator(m.op);
  KF_TRY(parse_support(c, root, m));
  KF_TRY(parse_parameters(c, root, op, m));
  KF_TRY(parse_expressions(c, root, m));
  KF_TRY(check_names(c, m, op));
  if (probe_default) KF_TRY(check_default(c, m, op));
  return m;
}

}  // namespace

Result<TemplateManifest> TemplateManifest::parse(std::string_view json_text, const std::string& path) {
  KF_TRY_ASSIGN(root, parse_json(json_text, path));
  if (!root.contains("kind") || root["kind"] != "triton") return parse_root(root, path, true);
  // A source template's manifest plus the Triton part (triton_spec.hpp). Its
  // default is not probed: its constraints speak of GPUs (shared memory,
  // head dims within its envelope), not of the probe problem under
  // OpenCL's baseline limits; instantiate() checks every configuration.
  KF_TRY(parse_schema_version(Checker(path), root, *std::make_unique<TemplateManifest>()));
  auto spec = std::make_shared<TritonSpec>();
  KF_TRY_ASSIGN(common, split_triton_manifest(root, path, *spec));
  KF_TRY_ASSIGN(m, parse_root(common, path, false));
  m.kind = TemplateKindId::kTriton;
  m.triton = std::move(spec);
  return m;
}

Config TemplateManifest::default_config() const {
  Config c;
  for (const auto& p : parameters) c.values[p.name] = p.default_value;
  return c;
}

const Parameter* TemplateManifest::find_parameter(std::string_view parameter) const {
  for (const auto& p : parameters) {
    if (p.name == parameter) return &p;
  }
  return nullptr;
}

bool TemplateManifest::supports(Dtype d) const {
  return std::find(dtypes.begin(), dtypes.end(), d) != dtypes.end();
}

bool TemplateManifest::supports(const Layout& l) const {
  return std::find(layouts.begin(), layouts.end(), l) != layouts.end();
}

bool TemplateManifest::supports_target(std::string_view backend) const {
  if (kind == TemplateKindId::kTriton && backend == kInterpreterBackend) return true;
  return std::find(targets.begin(), targets.end(), backend) != targets.end();
}

Status TemplateManifest::check_declared(const Config& c) const {
  const std::string prefix = "template " + name + ": ";
  for (const auto& [pname, value] : c.values) {
    const Parameter* p = find_parameter(pname);
    if (p == nullptr) return Error::bad_input(prefix + "unknown parameter '" + printable(pname) + "'");
    if (std::find(p->values.begin(), p->values.end(), value) == p->values.end()) {
      return Error::bad_input(prefix + "parameter " + pname + ": value " + std::to_string(value) +
                              " is not declared (declared: " + join_ints(p->values) + ")");
    }
  }
  for (const auto& p : parameters) {
    if (c.values.count(p.name) == 0) {
      return Error::bad_input(prefix + "parameter " + p.name + ": missing from configuration '" +
                              c.canonical_name() + "'");
    }
  }
  return ok_status();
}

Status TemplateManifest::check_declared_name(std::string_view canonical) const {
  auto c = Config::parse(canonical);
  if (!c.ok()) return c.error();
  return check_declared(*c);
}

}  // namespace kforge
