// The rope operator: problem checks, cost model, reproducible workloads (a
// prefill at position 0, a late decode-like position) and the double reference.
#include "generator/rope_operator.hpp"

#include <cmath>
#include <limits>

#include "generator/workload_builder.hpp"

namespace kforge {

namespace {

struct Dims {
  std::size_t tokens, heads, head_dim;
  std::size_t elements() const { return tokens * heads * head_dim; }
};

Dims dims_of(const Problem& p) {
  auto get = [&](const char* name) {
    const std::int64_t v = p.dim(name);
    return static_cast<std::size_t>(v > 0 ? v : 0);
  };
  return {get("tokens"), get("heads"), get("head_dim")};
}

Status check_dims(const Problem& p) {
  for (const auto& [name, value] : p.dims) {
    if (name != "tokens" && name != "heads" && name != "head_dim") {
      return Error::bad_input("rope: unknown dimension '" + name + "' (rope reads tokens, heads, head_dim)");
    }
  }
  for (const char* name : {"tokens", "heads", "head_dim"}) {
    auto it = p.dims.find(name);
    if (it == p.dims.end()) return Error::bad_input(std::string("rope: dimension ") + name + " is missing");
    if (it->second <= 0) {
      return Error::bad_input(std::string("rope: dimension ") + name + " must be positive, got " +
                              std::to_string(it->second));
    }
    if (it->second > std::numeric_limits<std::int32_t>::max()) {
      return Error::bad_input(std::string("rope: dimension ") + name + " = " + std::to_string(it->second) +
                              " does not fit a 32-bit kernel argument");
    }
  }
  if (p.dims.at("head_dim") % 2 != 0) {
    return Error::bad_input("rope: dimension head_dim must be even (it holds pairs), got " +
                            std::to_string(p.dims.at("head_dim")));
  }
  return ok_status();
}

/// Where the partner of element j of a head lies, and which of the pair it is.
struct Pair {
  std::size_t index;  ///< i in [0, D/2): the frequency
  std::size_t a, b;   ///< offsets of the pair's elements within the head
};

Pair pair_of(std::size_t j, std::size_t head_dim, bool interleaved) {
  const std::size_t half = head_dim / 2;
  if (interleaved) return {j / 2, j & ~std::size_t{1}, j | 1};
  const std::size_t i = j < half ? j : j - half;
  return {i, i, i + half};
}

}  // namespace

std::vector<AttributeSpec> RopeOperator::attributes() const {
  return {{"pairing",
           {"half", "interleaved"},
           "half: element i pairs with i + head_dim/2 (rotate-half, Hugging Face Llama); interleaved: 2i "
           "pairs with 2i + 1 (original Llama, GPT-J)"}};
}

Result<Problem> RopeOperator::normalize(Problem p) const {
  if (p.op.empty()) p.op = "rope";
  if (p.op != "rope") return Error::bad_input("rope: problem is for operator '" + p.op + "'");
  KF_TRY(normalize_attributes(*this, p));
  if (p.layout.trans_a || p.layout.trans_b) {
    return Error::bad_input("rope: layout " + p.layout.name() + " is not supported (rope reads NN only)");
  }
  KF_TRY(check_dims(p));
  std::int64_t bytes = 0;
  if (__builtin_mul_overflow(p.dims["tokens"], p.dims["heads"], &bytes) ||
      __builtin_mul_overflow(bytes, p.dims["head_dim"], &bytes) ||
      __builtin_mul_overflow(bytes, std::int64_t{4}, &bytes)) {
    return Error::bad_input("rope: problem " + p.dims_string() + " is too large to address");
  }
  return p;
}

void RopeOperator::add_to(Env& env, const Problem& p) const {
  const Dims d = dims_of(p);
  env["tokens"] = static_cast<std::int64_t>(d.tokens);
  env["heads"] = static_cast<std::int64_t>(d.heads);
  env["head_dim"] = static_cast<std::int64_t>(d.head_dim);
  env["dtype_bytes"] = static_cast<std::int64_t>(dtype_bytes(p.dtype));
  add_attributes_to(env, *this, p);
}

double RopeOperator::flops(const Problem& p) const {
  return 3.0 * static_cast<double>(dims_of(p).elements());
}

double RopeOperator::bytes(const Problem& p) const {
  return static_cast<double>(dims_of(p).elements()) * (static_cast<double>(dtype_bytes(p.dtype)) + 4.0);
}

Workload RopeOperator::make_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind) const {
  const Dims d = dims_of(p);
  const bool late = kind == WorkloadKind::kAccumulate;
  Workload w;
  w.seed = seed;
  HostTensor x = random_tensor("X", p.dtype, d.elements(), tensor_stream(seed, 0));
  if (late) {  // times 2^8: exact in every dtype, and an absolute error no longer hides
    for (std::size_t i = 0; i < d.elements(); ++i) store_element(x, i, load_element(x, i) * 256.0f);
  }
  w.tensors.push_back(std::move(x));
  HostTensor y = filled_tensor("Y", Dtype::kF32, d.elements(), std::numeric_limits<float>::quiet_NaN());
  y.is_output = true;
  w.tensors.push_back(std::move(y));
  w.output = 1;
  w.args = {scalar_i32("tokens", static_cast<std::int64_t>(d.tokens)),
            scalar_i32("heads", static_cast<std::int64_t>(d.heads)),
            scalar_i32("head_dim", static_cast<std::int64_t>(d.head_dim)),
            scalar_i32("pos0", late ? 4093 : 0),
            scalar_f32("theta", late ? 500000.0f : 10000.0f),
            tensor_arg("X", 0),
            tensor_arg("Y", 1)};
  return w;
}

std::vector<ArgumentSpec> RopeOperator::arguments(const Problem& p) const {
  const Dims d = dims_of(p);
  const std::uint64_t n = saturating_product({d.tokens, d.heads, d.head_dim});
  ArgumentSpec pos0 = int_spec("pos0", 0);
  pos0.value.reset();  // free: the position of the first token
  return {int_spec("tokens", static_cast<std::int64_t>(d.tokens)),
          int_spec("heads", static_cast<std::int64_t>(d.heads)),
          int_spec("head_dim", static_cast<std::int64_t>(d.head_dim)),
          pos0,
          float_spec("theta"),
          tensor_spec("X", p.dtype, n),
          tensor_spec("Y", Dtype::kF32, n, true)};
}

Reference RopeOperator::reference(const Problem& p, const Workload& w) const {
  const Dims d = dims_of(p);
  const std::size_t n = d.elements();
  Reference ref;
  ref.value.assign(n, std::numeric_limits<double>::quiet_NaN());
  ref.scale.assign(n, 0.0);
  // Second-order terms and slack: docs/tolerances.md derives the scale below.
  ref.tolerance = 2.0 * std::ldexp(1.0, -24);
  const std::size_t ix = tensor_named(w, "X");
  const std::size_t ip = [&] {
    for (std::size_t i = 0; i < w.args.size(); ++i)
      if (w.args[i].name == "pos0") return i;
    return w.args.size();
  }();
  if (ix == w.tensors.size() || w.tensors[ix].elements() != n || ip == w.args.size()) return ref;
  const HostTensor& x = w.tensors[ix];
  const double theta = scalar_named(w, "theta"), log2_theta = std::fabs(std::log2(theta));
  const bool interleaved = p.attr("pairing") == "interleaved";
  // The f32 angle's relative error: 2i/D (2.5 ulp), log2 (3), their product
  // (1), exp2's amplification by |exponent| ln 2 <= log2(theta) and its own
  // 3 ulp, the product with p (1): below (5 log2(theta) + 4) u.
  const double angle_error = 5.0 * log2_theta + 4.0;
  for (std::size_t t = 0; t < d.tokens; ++t) {
    const double pos = static_cast<double>(w.args[ip].i32) + static_cast<double>(t);
    for (std::size_t h = 0; h < d.heads; ++h) {
      const std::size_t base = (t * d.heads + h) * d.head_dim;
      for (std::size_t j = 0; j < d.head_dim; ++j) {
        const Pair pr = pair_of(j, d.head_dim, interleaved);
        const double angle =
            pos * std::pow(theta, -2.0 * static_cast<double>(pr.index) / static_cast<double>(d.head_dim));
        const double xa = load_element(x, base + pr.a), xb = load_element(x, base + pr.b);
        const double c = std::cos(angle), s = std::sin(angle);
        ref.value[base + j] = j == pr.a ? xa * c - xb * s : xb * c + xa * s;
        // sin and cos (4 ulp), two products and a sum, and the angle's error.
        ref.scale[base + j] = (std::fabs(xa) + std::fabs(xb)) * (6.0 + angle_error * std::fabs(angle));
      }
    }
  }
  return ref;
}

}  // namespace kforge
