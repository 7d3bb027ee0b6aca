// A declared operator: problem checks, workloads, cost and validation from
// its declaration; the reference values come from the user (a library or
// expected outputs), the tolerance from each output's declared rule.
#include "generator/declared_operator.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "generator/input_distribution.hpp"
#include "generator/workload_builder.hpp"

namespace kforge {

namespace {

std::string problem_text(const Problem& p) {
  return p.dims_string();
}

/// One unit in the last place of `dtype` near `x` (its smallest subnormal
/// near 0); 1 for an integer type.
double ulp_of(Dtype dtype, double x) {
  int mantissa = 23, min_exponent = -126;
  switch (dtype) {
    case Dtype::kF16:
      mantissa = 10, min_exponent = -14;
      break;
    case Dtype::kBF16:
      mantissa = 7;
      break;
    case Dtype::kF64:
      mantissa = 52, min_exponent = -1022;
      break;
    case Dtype::kF32:
      break;
    default:
      return 1.0;
  }
  const double a = std::fabs(x);
  const int e = a >= std::ldexp(1.0, min_exponent) ? std::ilogb(a) : min_exponent;
  return std::ldexp(1.0, e - mantissa);
}

double threshold(const ToleranceSpec& t, Dtype dtype, double ref) {
  return t.abs + t.rel * std::fabs(ref) + (t.ulp > 0 ? t.ulp * ulp_of(dtype, ref) : 0.0);
}

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b));
}

/// An integer buffer's fixed data must be integers its dtype holds; a float
/// buffer takes any numbers (rounded to its dtype as inputs are).
Status check_npy_dtype(const std::string& declaration, const DeclaredArgument& a, const std::string& file,
                       const NpyArray& array) {
  if (!a.dtype || !is_integer(*a.dtype)) return ok_status();
  const std::string field = declaration + ": " + a.field + ".dtype is " + std::string(dtype_name(*a.dtype));
  if (!array.is_integer()) {
    return Error::bad_input(file + ": dtype '" + array.descr + "' is not an integer type, but " + field);
  }
  HostTensor probe;
  probe.dtype = *a.dtype;
  probe.bytes.resize(dtype_bytes(*a.dtype));
  for (std::size_t k = 0; k < array.values.size(); ++k) {
    store_value(probe, 0, array.values[k]);
    if (load_value(probe, 0) != array.values[k]) {
      return Error::bad_input(file + ": element " + std::to_string(k) + " = " +
                              std::to_string(static_cast<std::int64_t>(array.values[k])) +
                              " does not fit, and " + field);
    }
  }
  return ok_status();
}

/// An expected output is a number at every element: NaN, which no kernel's
/// output can match, is refused at load rather than failing every candidate.
Status check_expected_values(const std::string& decl_path, const DeclaredArgument& a, const std::string& file,
                             const NpyArray& array) {
  for (std::size_t k = 0; k < array.values.size(); ++k) {
    if (std::isnan(array.values[k])) {
      return Error::bad_input(file + ": element " + std::to_string(k) + " is NaN: an expected output must be a "
                              "number (" + decl_path + ": reference.expected." + a.name + ")");
    }
  }
  return ok_status();
}

}  // namespace

Result<std::shared_ptr<const DeclaredOperator>> DeclaredOperator::create(
    OperatorDeclaration declaration, std::shared_ptr<const ExternalReference> external) {
  if (declaration.reference.kind == ReferenceSpec::Kind::kLibrary && !external) {
    return Error::internal(declaration.path + ": reference.library: no loader for the library");
  }
  std::shared_ptr<DeclaredOperator> op(new DeclaredOperator(std::move(declaration), std::move(external)));
  for (const auto& a : op->decl_.arguments) {
    std::vector<std::string> files;
    if (a.init.kind == InputInit::Kind::kNpy) files.push_back(a.init.file);
    if (auto it = op->decl_.reference.expected.find(a.name); it != op->decl_.reference.expected.end())
      files.push_back(it->second);
    for (const auto& file : files) {
      KF_TRY_ASSIGN(array, read_npy(file));
      KF_TRY(check_npy_dtype(op->decl_.path, a, file, array));
      const auto expected = op->decl_.reference.expected.find(a.name);
      if (expected != op->decl_.reference.expected.end() && expected->second == file)
        KF_TRY(check_expected_values(op->decl_.path, a, file, array));
      op->arrays_[file] = std::move(array);
    }
  }
  return std::shared_ptr<const DeclaredOperator>(std::move(op));
}

std::string DeclaredOperator::reference_description() const {
  if (external_) return external_->describe();
  if (decl_.reference.kind == ReferenceSpec::Kind::kTemplate) {
    return "reference template " + decl_.reference.template_dir + " config " + decl_.reference.config;
  }
  std::string s = "expected outputs";
  for (const auto& [name, file] : decl_.reference.expected) s += " " + name + "=" + file;
  return s;
}

std::vector<std::string> DeclaredOperator::dims() const {
  std::vector<std::string> out;
  for (const auto& d : decl_.dims) out.push_back(d.name);
  return out;
}

Env DeclaredOperator::env_of(const Problem& p) const {
  Env env;
  for (const auto& d : decl_.dims) {
    auto it = p.dims.find(d.name);
    env[d.name] = it != p.dims.end() ? it->second : d.default_value.value_or(0);
  }
  env["dtype_bytes"] = static_cast<std::int64_t>(dtype_bytes(p.dtype));
  add_attributes_to(env, *this, p);
  return env;
}

std::vector<std::string> DeclaredOperator::extra_names() const {
  std::vector<std::string> names = attribute_names(*this);
  names.insert(names.begin(), "dtype_bytes");
  return names;
}

std::uint64_t DeclaredOperator::count_of(const DeclaredArgument& a, const Env& env) const {
  auto n = a.count->expr.eval(env);
  return n.ok() && *n > 0 ? static_cast<std::uint64_t>(*n) : 0;
}

Result<Problem> DeclaredOperator::normalize(Problem p) const {
  const std::string who = decl_.name;
  if (p.op.empty()) p.op = who;
  if (p.op != who) return Error::bad_input(who + ": problem is for operator '" + p.op + "'");
  KF_TRY(normalize_attributes(*this, p));
  if (p.layout.trans_a || p.layout.trans_b) {
    return Error::bad_input(who + ": layout " + p.layout.name() +
                            " is not supported (a declared operator reads NN)");
  }
  std::string known;
  for (const auto& d : decl_.dims) known += (known.empty() ? "" : ", ") + d.name;
  for (const auto& [name, value] : p.dims) {
    if (std::none_of(decl_.dims.begin(), decl_.dims.end(),
                     [&](const DeclaredDim& d) { return d.name == name; })) {
      return Error::bad_input(who + ": unknown dimension '" + name + "' (" + who + " reads " + known + ")");
    }
  }
  for (const auto& d : decl_.dims) {
    if (d.default_value) p.dims.emplace(d.name, *d.default_value);
    auto it = p.dims.find(d.name);
    if (it == p.dims.end())
      return Error::bad_input(who + ": dimension " + d.name + " is missing (" + decl_.path + ")");
    if (it->second <= 0 || it->second > std::numeric_limits<std::int32_t>::max()) {
      return Error::bad_input(who + ": dimension " + d.name + " = " + std::to_string(it->second) +
                              " must be positive and fit a 32-bit kernel argument");
    }
  }
  const Env env = env_of(p);
  const std::string at = " for " + problem_text(p);
  for (const auto& a : decl_.arguments) {
    const FieldExpr* e = a.count ? &*a.count : a.value ? &*a.value : nullptr;
    if (!e) continue;
    auto v = e->expr.eval(env);
    const std::string where = decl_.path + ": " + e->field + ": '" + e->expr.text() + "'";
    if (!v.ok()) return Error::bad_input(where + ": " + v.error().message + at);
    if (a.count) {
      std::int64_t bytes = 0;
      if (*v <= 0) {
        return Error::bad_input(where + " evaluates to " + std::to_string(*v) + at +
                                " (an element count must be positive)");
      }
      if (__builtin_mul_overflow(*v, static_cast<std::int64_t>(dtype_bytes(a.dtype_for(p.dtype))), &bytes)) {
        return Error::bad_input(where + " = " + std::to_string(*v) + at + " is too large to address");
      }
    } else if (a.type == ArgumentType::kInt32 && (*v < std::numeric_limits<std::int32_t>::min() ||
                                                  *v > std::numeric_limits<std::int32_t>::max())) {
      return Error::bad_input(where + " = " + std::to_string(*v) + at + " does not fit a 32-bit argument");
    }
  }
  // The cost model: a negative count would print negative GFLOP/s.
  for (const auto* cost : {&decl_.flops, &decl_.bytes}) {
    if (!*cost) continue;
    auto v = (*cost)->expr.eval(env);
    const std::string where = decl_.path + ": " + (*cost)->field + ": '" + (*cost)->expr.text() + "'";
    if (!v.ok()) return Error::bad_input(where + ": " + v.error().message + at);
    if (*v < 0)
      return Error::bad_input(where + " evaluates to " + std::to_string(*v) + at + " (a count is never negative)");
  }
  // Fixed data must have the size the problem gives its buffer.
  for (const auto& a : decl_.arguments) {
    std::string file;
    if (a.init.kind == InputInit::Kind::kNpy) file = a.init.file;
    if (auto it = decl_.reference.expected.find(a.name); it != decl_.reference.expected.end())
      file = it->second;
    if (file.empty()) continue;
    const NpyArray& array = arrays_.at(file);
    const std::uint64_t n = count_of(a, env);
    if (array.elements() != n) {
      return Error::bad_input(file + ": shape " + array.shape_text() + " holds " +
                              std::to_string(array.elements()) + " elements, but " + decl_.path + ": " +
                              a.count->field + " '" + a.count->expr.text() + "' is " + std::to_string(n) +
                              at);
    }
  }
  return p;
}

void DeclaredOperator::add_to(Env& env, const Problem& p) const {
  for (const auto& [k, v] : env_of(p)) env[k] = v;
}

double DeclaredOperator::flops(const Problem& p) const {
  if (!decl_.flops) return 0.0;
  auto v = decl_.flops->expr.eval(env_of(p));
  return v.ok() ? static_cast<double>(*v) : 0.0;
}

double DeclaredOperator::bytes(const Problem& p) const {
  const Env env = env_of(p);
  if (decl_.bytes) {
    auto v = decl_.bytes->expr.eval(env);
    return v.ok() ? static_cast<double>(*v) : 0.0;
  }
  double total = 0.0;  // each buffer moved once; an inout one twice
  for (const auto& a : decl_.arguments) {
    if (a.type != ArgumentType::kBuffer) continue;
    const double b =
        static_cast<double>(count_of(a, env)) * static_cast<double>(dtype_bytes(a.dtype_for(p.dtype)));
    total += a.role == BufferRole::kInOut ? 2 * b : b;
  }
  return total;
}

Workload DeclaredOperator::make_workload(const Problem& p, std::uint64_t seed, WorkloadKind) const {
  const Env env = env_of(p);
  Workload w;
  w.seed = seed;
  for (std::size_t i = 0; i < decl_.arguments.size(); ++i) {
    const DeclaredArgument& a = decl_.arguments[i];
    if (a.type != ArgumentType::kBuffer) {
      auto v = a.value ? a.value->expr.eval(env) : Result<std::int64_t>(0);
      const std::int64_t iv = v.ok() ? *v : 0;
      w.args.push_back(
          a.type == ArgumentType::kInt32
              ? scalar_i32(a.name, iv)
              : scalar_f32(a.name, a.value ? static_cast<float>(iv) : static_cast<float>(a.literal)));
      continue;
    }
    const std::size_t n = count_of(a, env);
    HostTensor t = filled_tensor(a.name, a.dtype_for(p.dtype), n, std::numeric_limits<float>::quiet_NaN());
    if (!a.poison) {
      const NpyArray* npy = a.init.kind == InputInit::Kind::kNpy ? &arrays_.at(a.init.file) : nullptr;
      fill_input(t, a.init, tensor_stream(seed, i), npy);
    }
    t.is_output = a.is_output();
    if (t.is_output) w.outputs.push_back(w.tensors.size());
    w.args.push_back(tensor_arg(a.name, w.tensors.size()));
    w.tensors.push_back(std::move(t));
  }
  w.output = w.outputs.empty() ? 0 : w.outputs.front();
  return w;
}

std::vector<ArgumentSpec> DeclaredOperator::arguments(const Problem& p) const {
  const Env env = env_of(p);
  std::vector<ArgumentSpec> out;
  for (const auto& a : decl_.arguments) {
    switch (a.type) {
      case ArgumentType::kBuffer:
        out.push_back(tensor_spec(a.name, a.dtype_for(p.dtype), count_of(a, env), a.is_output()));
        break;
      case ArgumentType::kInt32: {
        auto v = a.value->expr.eval(env);
        out.push_back(int_spec(a.name, v.ok() ? *v : 0));
        break;
      }
      case ArgumentType::kFloat32:
        out.push_back(float_spec(a.name));
        break;
    }
  }
  return out;
}

Result<std::vector<double>> DeclaredOperator::reference_outputs(const Problem& p, const Workload& w) const {
  std::vector<double> values;
  if (decl_.reference.kind == ReferenceSpec::Kind::kTemplate) {
    return Error::internal(decl_.path + ": reference.template: computed on the device, not here");
  }
  if (!external_) {
    for (const auto& a : decl_.arguments) {
      if (!a.is_output()) continue;
      const auto& v = arrays_.at(decl_.reference.expected.at(a.name)).values;
      values.insert(values.end(), v.begin(), v.end());
    }
    return values;
  }
  std::vector<ReferenceArgument> args;
  for (std::size_t i = 0; i < decl_.arguments.size(); ++i) {
    ReferenceArgument r;
    r.declared = &decl_.arguments[i];
    const OperatorArg& arg = w.args.at(i);
    if (arg.kind == OperatorArg::Kind::kTensor) {
      const HostTensor& t = w.tensors.at(arg.tensor);
      r.dtype = t.dtype;
      r.data.resize(t.elements());
      // A poisoned output is NaN to the reference in every dtype (an integer
      // one holds the integer poison on the device).
      for (std::size_t k = 0; k < r.data.size(); ++k)
        r.data[k] = r.declared->poison ? std::numeric_limits<double>::quiet_NaN() : load_value(t, k);
    } else {
      r.value = arg.kind == OperatorArg::Kind::kInt32 ? arg.i32 : arg.f32;
    }
    args.push_back(std::move(r));
  }
  // Twice, each on its own copy: a reference that reads memory it did not
  // set, or keeps state between calls, disagrees with itself.
  std::vector<ReferenceArgument> again = args;
  KF_TRY(external_->compute(p, args));
  KF_TRY(external_->compute(p, again));
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!args[i].declared->is_output()) continue;
    const std::string& name = args[i].declared->name;
    for (std::size_t k = 0; k < args[i].data.size(); ++k) {
      const double a = args[i].data[k], b = again[i].data[k];
      const std::string who = "reference (" + external_->describe() + ") for " + p.key() + ": output " +
                              name + " element " + std::to_string(k);
      if (!same_bits(a, b)) {
        return Error::bad_input(who + ": disagrees with itself on the same inputs (" + std::to_string(a) +
                                " then " + std::to_string(b) + ")");
      }
      if (std::isnan(a)) return Error::bad_input(who + ": is NaN (not written, or not a number)");
    }
    values.insert(values.end(), args[i].data.begin(), args[i].data.end());
  }
  return values;
}

Result<Reference> DeclaredOperator::reference_from(const Problem& p, std::vector<double> values) const {
  std::size_t expected = 0;
  for (const auto& a : decl_.arguments) {
    if (a.is_output()) expected += count_of(a, env_of(p));
  }
  if (values.size() != expected) {
    return Error::internal(decl_.path + ": " + std::to_string(values.size()) + " reference values for " +
                           std::to_string(expected) + " output elements");
  }
  Reference ref;
  ref.tolerance = 1.0;  // each element's threshold is its scale
  ref.scale.reserve(values.size());
  std::size_t at = 0;
  for (const auto& a : decl_.arguments) {
    if (!a.is_output()) continue;
    const std::size_t n = count_of(a, env_of(p));
    const ToleranceSpec& tol = a.tolerance_for(p.dtype);
    const Dtype out = a.dtype_for(p.dtype);
    for (std::size_t k = 0; k < n && at < values.size(); ++k, ++at)
      ref.scale.push_back(threshold(tol, out, values[at]));
  }
  ref.value = std::move(values);
  return ref;
}

Result<std::vector<Reference>> DeclaredOperator::try_references(
    const Problem& p, const std::vector<const Workload*>& ws) const {
  std::vector<Reference> out;
  for (const Workload* w : ws) {
    KF_TRY_ASSIGN(values, reference_outputs(p, *w));
    KF_TRY_ASSIGN(ref, reference_from(p, std::move(values)));
    out.push_back(std::move(ref));
  }
  return out;
}

Reference DeclaredOperator::reference(const Problem& p, const Workload& w) const {
  auto values = reference_outputs(p, w);
  auto ref = values.ok() ? reference_from(p, std::move(*values)) : Result<Reference>(values.error());
  if (ref.ok()) return std::move(*ref);
  Reference nan;  // nothing passes a reference that failed
  std::size_t n = 0;
  for (std::size_t i : w.outputs) n += w.tensors[i].elements();
  nan.value.assign(n, std::numeric_limits<double>::quiet_NaN());
  nan.scale.assign(n, 0.0);
  return nan;
}

}  // namespace kforge
