// Turns a template, configuration and problem into compilable source and launch geometry.
#include "generator/instance.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

#include "core/hash.hpp"
#include "core/printable.hpp"

namespace kforge {

namespace {

std::string dtype_macro(Dtype d) {
  switch (d) {
    case Dtype::kF32:
      return "KF_DTYPE_F32";
    case Dtype::kF16:
      return "KF_DTYPE_F16";
    case Dtype::kBF16:
      return "KF_DTYPE_BF16";
    default:  // not a problem dtype: no template reads it as kf_in_t
      break;
  }
  return "KF_DTYPE_UNKNOWN";
}

/// Attribute names and values are lower-case words (parse_attrs): as macro names, upper case.
std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string kernel_name_for(const std::string& kernel, const std::string& config) {
  std::string name = kernel + "__" + config;
  if (name.size() <= kMaxKernelName) return name;
  const std::string suffix = "_h" + Hasher().add(config).hex();
  name.resize(kMaxKernelName - suffix.size());
  return name + suffix;
}

namespace {

/// The normalized problem, once the template is known to implement `op`
/// for the problem's operator, dtype and layout.
Result<Problem> applicable_problem(const TemplateManifest& m, const Operator& op, const Problem& problem) {
  if (m.op != op.name()) {
    return Error::bad_input("template " + m.name + " implements " + m.op + ", not " + std::string(op.name()));
  }
  if (!problem.op.empty() && problem.op != m.op) {
    return Error::bad_input("template " + m.name + " implements " + m.op + ", but problem " + problem.key() +
                            " is " + problem.op);
  }
  KF_TRY_ASSIGN(p, op.normalize(problem));
  if (!m.supports(p.dtype)) {
    return Error{ErrorCode::kUnsupported,
                 "template " + m.name + " does not support dtype " + std::string(dtype_name(p.dtype)),
                 {}};
  }
  if (!m.supports(p.layout)) {
    return Error{
        ErrorCode::kUnsupported, "template " + m.name + " does not support layout " + p.layout.name(), {}};
  }
  return p;
}

/// Evaluates a manifest's expressions for one (configuration, problem),
/// naming the file, field, configuration and problem in every error.
class ManifestEval {
 public:
  ManifestEval(const TemplateManifest& m, const Operator& op, const Config& config, const Problem& p,
               const DeviceLimits& limits)
      : m_(m), cfg_(config.canonical_name()), key_(p.key()), where_(" (configuration " + cfg_ + " on " + key_ + ")") {
    limits.add_to(env_);
    op.add_to(env_, p);
    for (const auto& [name, value] : config.values) env_[name] = value;
  }

  Result<std::int64_t> operator()(const FieldExpr& fe) const { return (*this)(fe.expr, fe.field); }
  Result<std::int64_t> operator()(const Expr& e, const std::string& field) const {
    auto v = e.eval(env_);
    if (!v) return Error::bad_input(m_.path + ": " + field + ": " + v.error().message + where_);
    return v;
  }

  /// kBadInput for a broken constraint, kUnsupported for a problem outside the envelope.
  Status check_rules() const {
    for (const auto& fe : m_.constraints) {
      KF_TRY_ASSIGN(v, (*this)(fe));
      if (v == 0) {
        return Error::bad_input("template " + m_.name + ": configuration " + cfg_ + " breaks " + fe.field + " '" +
                                printable(fe.expr.text()) + "' on " + key_);
      }
    }
    for (const auto& fe : m_.envelope) {
      KF_TRY_ASSIGN(v, (*this)(fe));
      if (v == 0) {
        return Error{ErrorCode::kUnsupported,
                     "template " + m_.name + ": problem " + key_ + " is outside " + fe.field + " '" +
                         printable(fe.expr.text()) + "' (configuration " + cfg_ + ")",
                     {}};
      }
    }
    return ok_status();
  }

  /// Block and grid, each at least 1, and the block within the device's thread limit.
  Status launch_geometry(const DeviceLimits& limits, Instance& inst) const {
    std::int64_t threads = 1;
    for (std::size_t i = 0; i < 3; ++i) {
      KF_TRY_ASSIGN(b, (*this)(m_.block[i]));
      KF_TRY_ASSIGN(g, (*this)(m_.grid[i]));
      if (b < 1 || g < 1) {
        const FieldExpr& bad = b < 1 ? m_.block[i] : m_.grid[i];
        return Error::bad_input(m_.path + ": " + bad.field + ": '" + printable(bad.expr.text()) + "' gives " +
                                std::to_string(b < 1 ? b : g) + ", must be >= 1" + where_);
      }
      inst.geometry.block[i] = b;
      inst.geometry.grid[i] = g;
      if (__builtin_mul_overflow(threads, b, &threads)) threads = std::numeric_limits<std::int64_t>::max();
    }
    if (threads > limits.max_block_threads) {
      return Error{ErrorCode::kResource,
                   "template " + m_.name + ": configuration " + cfg_ + " uses " + std::to_string(threads) +
                       " threads per block, more than the device limit " +
                       std::to_string(limits.max_block_threads),
                   {}};
    }
    return ok_status();
  }

  /// The manifest's local memory, when it states one, within the device's limit.
  Status local_memory(const DeviceLimits& limits, Instance& inst) const {
    if (!m_.local_memory_bytes) return ok_status();
    KF_TRY_ASSIGN(bytes, (*this)(*m_.local_memory_bytes));
    if (bytes < 0) {
      return Error::bad_input(m_.path + ": local_memory_bytes: '" + printable(m_.local_memory_bytes->expr.text()) +
                              "' gives " + std::to_string(bytes) + where_);
    }
    if (bytes > limits.local_mem_bytes) {
      return Error{ErrorCode::kResource,
                   "template " + m_.name + ": configuration " + cfg_ + " uses " + std::to_string(bytes) +
                       " bytes of local memory, more than the device limit " +
                       std::to_string(limits.local_mem_bytes),
                   {}};
    }
    inst.local_memory_bytes = bytes;
    return ok_status();
  }

 private:
  const TemplateManifest& m_;
  const std::string cfg_, key_, where_;
  Env env_;
};

/// The defines of one instance: its parameters, kernel name, dtype, layout,
/// epilogue and attributes. No problem dimensions: one text per (template,
/// config, dtype, layout) keeps compile caches hitting across shapes.
std::string instance_defines(const TemplateManifest& m, const Operator& op, const Config& config,
                             const Problem& p, const std::string& kernel_name) {
  std::string src = "// kforge instance: " + m.name + " " + config.canonical_name() + " " +
                    std::string(dtype_name(p.dtype)) + " " + p.layout.name() +
                    (p.epilogue.plain() ? "" : " " + p.epilogue.name()) +
                    (p.attrs.empty() ? "" : " " + p.attrs_string()) + "\n";
  for (const auto& [name, value] : config.values) src += "#define " + name + " " + std::to_string(value) + "\n";
  src += "#define KF_KERNEL_NAME " + kernel_name + "\n";
  src += "#define " + dtype_macro(p.dtype) + " 1\n";
  src += "#define KF_DTYPE_BYTES " + std::to_string(dtype_bytes(p.dtype)) + "\n";
  src += std::string("#define KF_TRANS_A ") + (p.layout.trans_a ? "1" : "0") + "\n";
  src += std::string("#define KF_TRANS_B ") + (p.layout.trans_b ? "1" : "0") + "\n";
  src += std::string("#define KF_BIAS ") + (p.epilogue.bias ? "1" : "0") + "\n";
  src += "#define KF_ACTIVATION " + std::to_string(static_cast<int>(p.epilogue.activation)) + "\n";
  for (const auto& spec : op.attributes()) {
    // normalize() checked the value against the spec, so it is one of these words.
    const std::string value = p.attr(spec.name);
    std::size_t index = 0;
    while (index < spec.values.size() && spec.values[index] != value) ++index;
    src += "#define KF_" + upper(spec.name) + " " + std::to_string(index) + "\n";
    src += "#define KF_" + upper(spec.name) + "_" + upper(value) + " 1\n";
  }
  return src;
}

/// Triton's element type for a kforge dtype.
std::string triton_dtype(Dtype d) {
  switch (d) {
    case Dtype::kF16: return "fp16";
    case Dtype::kBF16: return "bf16";
    default: return "fp32";
  }
}

/// A Triton instance's source: what the compile helper needs besides the
/// kernel file, the target and where to write (triton_kind.cpp adds those),
/// and how the kernel's arguments come from the operator's.
Result<std::string> triton_source(const TemplateSource& tpl, const Operator& op, const Config& config,
                                  const Problem& p, const ManifestEval& eval) {
  const TemplateManifest& m = tpl.manifest;
  const TritonSpec& spec = *m.triton;
  const std::vector<ArgumentSpec> contract = op.arguments(p);
  nlohmann::json signature = nlohmann::json::object(), arguments = nlohmann::json::array();
  for (std::size_t i = 0; i < spec.arguments.size(); ++i) {
    const TritonArgument& a = spec.arguments[i];
    std::string type = a.type;
    if (auto at = type.find("{dtype}"); at != std::string::npos) type.replace(at, 7, triton_dtype(p.dtype));
    signature[a.name] = type;
    if (a.value) {
      KF_TRY_ASSIGN(v, eval(*a.value, "arguments[" + std::to_string(i) + "].value"));
      arguments.push_back({{"name", a.name}, {"value", v}});
      continue;
    }
    if (a.workspace) {  // made by the device: the caller passes nothing for it
      const std::string field = "arguments[" + std::to_string(i) + "] (" + a.name + ").workspace";
      KF_TRY_ASSIGN(elements, eval(*a.workspace, field));
      if (elements < 0)
        return Error::bad_input(m.path + ": " + field + ": " + std::to_string(elements) + " elements for this problem");
      arguments.push_back({{"name", a.name}, {"workspace", elements}, {"zeroed", a.zeroed}});
      continue;
    }
    auto it = std::find_if(contract.begin(), contract.end(), [&](const ArgumentSpec& s) { return s.name == a.bind; });
    if (it == contract.end())
      return Error::bad_input(m.path + ": arguments[" + std::to_string(i) + "].bind: '" + a.bind +
                              "' is not an argument of " + m.op);
    arguments.push_back({{"name", a.name}, {"from", it - contract.begin()}});
  }
  nlohmann::json constexprs = nlohmann::json::object(), options = spec.options;
  for (const auto& [name, value] : config.values) (is_triton_option(name) ? options : constexprs)[name] = value;
  for (const auto& [name, value] : spec.constexprs) {
    if (!value.is_string()) {
      constexprs[name] = value;
      continue;
    }
    KF_TRY_ASSIGN(e, Expr::parse(value.get<std::string>()));
    KF_TRY_ASSIGN(v, eval(e, "constexprs." + name));
    constexprs[name] = v;
  }
  nlohmann::json divisible = nlohmann::json::array();
  for (std::size_t i = 0; i < spec.specialization.size(); ++i) {
    const TritonHint& h = spec.specialization[i];
    if (h.when) {
      KF_TRY_ASSIGN(holds, eval(*h.when, "specialization[" + std::to_string(i) + "].when"));
      if (!holds) continue;
    }
    divisible.push_back(h.argument);
  }
  nlohmann::json backend_only = nlohmann::json::object();
  for (const auto& [name, backends] : spec.parameter_backends) backend_only[name] = backends;
  return nlohmann::json{{"kernel", m.kernel},
                        {"kernel_hash", Hasher().add(tpl.kernel_text).hex()},
                        {"signature", signature},
                        {"constexprs", constexprs},
                        {"options", options},
                        {"specialization", {{"divisible_by_16", divisible}}},
                        {"parameter_backends", backend_only},
                        {"arguments", arguments}}
      .dump();
}

}  // namespace

Result<Instance> instantiate(const TemplateSource& tpl, std::string_view prelude, const Operator& op,
                             const Config& config, const Problem& problem, const DeviceLimits& limits) {
  const TemplateManifest& m = tpl.manifest;
  // Values may come from a database: check them before they reach any source text.
  KF_TRY(m.check_declared(config));
  KF_TRY_ASSIGN(p, applicable_problem(m, op, problem));
  const ManifestEval eval(m, op, config, p, limits);
  KF_TRY(eval.check_rules());

  Instance inst;
  inst.template_name = m.name;
  inst.config_name = config.canonical_name();
  inst.kernel_name = kernel_name_for(m.kernel, inst.config_name);
  KF_TRY(eval.launch_geometry(limits, inst));
  KF_TRY(eval.local_memory(limits, inst));
  if (m.kind == TemplateKindId::kTriton) {  // the kernel keeps its function's name in the binary
    inst.kernel_name = m.kernel;
    KF_TRY_ASSIGN(source, triton_source(tpl, op, config, p, eval));
    inst.source = std::move(source);
    return inst;
  }

  std::string src = instance_defines(m, op, config, p, inst.kernel_name);
  src += prelude;
  if (!prelude.empty() && prelude.back() != '\n') src += '\n';
  src += "#line 1 \"" + m.source + "\"\n";
  src += tpl.kernel_text;
  inst.source = std::move(src);
  return inst;
}

}  // namespace kforge
