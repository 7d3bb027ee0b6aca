// The reduce operator: problem checks, cost, workloads (uniform and boundary
// rows) and the double reference with its tolerance.
#include "generator/reduce_operator.hpp"

#include <cmath>
#include <limits>

#include "generator/workload_builder.hpp"

namespace kforge {

namespace {

struct Dims {
  std::size_t rows, cols, outputs, length;
};

Dims dims_of(const Problem& p) {
  auto get = [&](const char* name) {
    const std::int64_t v = p.dim(name);
    return static_cast<std::size_t>(v > 0 ? v : 0);
  };
  const std::size_t rows = get("rows"), cols = get("cols");
  const bool all = p.attr("axis") == "all";
  return {rows, cols, all ? 1 : rows, all ? rows * cols : cols};
}

}  // namespace

std::vector<AttributeSpec> ReduceOperator::attributes() const {
  return {{"axis", {"last", "all"}, "last: one output per row; all: one output for the whole tensor"},
          {"kind", {"sum", "max"}, "the reduction: sum or max (max propagates NaN)"}};
}

Result<Problem> ReduceOperator::normalize(Problem p) const {
  if (p.op.empty()) p.op = "reduce";
  if (p.op != "reduce") return Error::bad_input("reduce: problem is for operator '" + p.op + "'");
  KF_TRY(normalize_attributes(*this, p));
  if (p.layout.trans_a || p.layout.trans_b) {
    return Error::bad_input("reduce: layout " + p.layout.name() + " is not supported (reduce reads NN only)");
  }
  for (const auto& [name, value] : p.dims) {
    if (name != "rows" && name != "cols") {
      return Error::bad_input("reduce: unknown dimension '" + name + "' (reduce reads rows, cols)");
    }
  }
  for (const char* name : {"rows", "cols"}) {
    auto it = p.dims.find(name);
    if (it == p.dims.end()) return Error::bad_input(std::string("reduce: dimension ") + name + " is missing");
    if (it->second <= 0) {
      return Error::bad_input(std::string("reduce: dimension ") + name + " must be positive, got " +
                              std::to_string(it->second));
    }
  }
  // Kernels index with 32-bit ints, with room for a step past the end.
  std::int64_t n = 0;
  if (__builtin_mul_overflow(p.dims["rows"], p.dims["cols"], &n) || n > (std::int64_t{1} << 30)) {
    return Error::bad_input("reduce: problem " + p.dims_string() + " has more than 2^30 elements");
  }
  return p;
}

std::vector<std::string> ReduceOperator::extra_names() const {
  std::vector<std::string> names{"dtype_bytes", "outputs", "length"};
  for (auto& n : attribute_names(*this)) names.push_back(n);
  return names;
}

void ReduceOperator::add_to(Env& env, const Problem& p) const {
  const Dims d = dims_of(p);
  env["rows"] = static_cast<std::int64_t>(d.rows);
  env["cols"] = static_cast<std::int64_t>(d.cols);
  env["outputs"] = static_cast<std::int64_t>(d.outputs);
  env["length"] = static_cast<std::int64_t>(d.length);
  env["dtype_bytes"] = static_cast<std::int64_t>(dtype_bytes(p.dtype));
  add_attributes_to(env, *this, p);
}

double ReduceOperator::flops(const Problem& p) const {
  const Dims d = dims_of(p);
  return static_cast<double>(d.rows) * static_cast<double>(d.cols);
}

double ReduceOperator::bytes(const Problem& p) const {
  const Dims d = dims_of(p);
  return static_cast<double>(d.rows) * static_cast<double>(d.cols) * static_cast<double>(dtype_bytes(p.dtype)) +
         4.0 * static_cast<double>(d.outputs);
}

Workload ReduceOperator::make_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind) const {
  const Dims d = dims_of(p);
  const std::size_t n = d.rows * d.cols;
  Workload w;
  w.seed = seed;
  HostTensor x = random_tensor("X", p.dtype, n, tensor_stream(seed, 0));
  if (kind == WorkloadKind::kAccumulate) {
    // The second run: boundary rows, cycling: all negative (a max that starts
    // at 0 fails), offset 64 + U (no cancellation, large sums), large
    // magnitudes (2^14 for f16, 2^40 otherwise), tiny 2^-8 U.
    const float big = p.dtype == Dtype::kF16 ? 16384.0f : 1099511627776.0f;
    for (std::size_t r = 0; r < d.rows; ++r) {
      for (std::size_t c = 0; c < d.cols; ++c) {
        const std::size_t i = r * d.cols + c;
        const float u = load_element(x, i);
        float v = u;
        switch (r % 4) {
          case 0: v = -std::fabs(u) - 0.5f; break;
          case 1: v = 64.0f + u; break;
          case 2: v = u * big; break;
          case 3: v = u * (1.0f / 256.0f); break;
        }
        store_element(x, i, v);
      }
    }
  }
  w.tensors.push_back(std::move(x));
  HostTensor out = filled_tensor("out", Dtype::kF32, d.outputs, std::numeric_limits<float>::quiet_NaN());
  out.is_output = true;
  w.tensors.push_back(std::move(out));
  w.tensors.push_back(zero_workspace("partials", d.outputs * kReduceMaxSplit));
  w.tensors.push_back(zero_workspace("counters", d.outputs));
  w.output = 1;
  w.args = {scalar_i32("rows", static_cast<std::int64_t>(d.rows)),
            scalar_i32("cols", static_cast<std::int64_t>(d.cols)),
            tensor_arg("X", 0),
            tensor_arg("out", 1),
            tensor_arg("partials", 2),
            tensor_arg("counters", 3)};
  return w;
}

std::vector<ArgumentSpec> ReduceOperator::arguments(const Problem& p) const {
  const Dims d = dims_of(p);
  return {int_spec("rows", static_cast<std::int64_t>(d.rows)),
          int_spec("cols", static_cast<std::int64_t>(d.cols)),
          tensor_spec("X", p.dtype, saturating_product({d.rows, d.cols})),
          tensor_spec("out", Dtype::kF32, d.outputs, true),
          tensor_spec("partials", Dtype::kF32, saturating_product({d.outputs, kReduceMaxSplit})),
          tensor_spec("counters", Dtype::kF32, d.outputs)};
}

Reference ReduceOperator::reference(const Problem& p, const Workload& w) const {
  const Dims d = dims_of(p);
  const bool is_max = p.attr("kind") == "max";
  Reference ref;
  ref.value.assign(d.outputs, std::numeric_limits<double>::quiet_NaN());
  ref.scale.assign(d.outputs, 0.0);
  // max is exact; a sum of n terms in f32, in any order and grouping, errs by
  // at most gamma(n - 1) * sum |x| (Higham, ch. 4).
  const double nu = static_cast<double>(d.length) * unit_roundoff(Dtype::kF32);
  ref.tolerance = is_max ? 0.0 : (nu < 0.5 ? nu / (1.0 - nu) : 1.0);
  if (w.tensors.empty() || w.tensors[0].elements() != d.rows * d.cols) return ref;
  const HostTensor& x = w.tensors[0];
  for (std::size_t o = 0; o < d.outputs; ++o) {
    double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
    double mag = 0.0;
    for (std::size_t i = 0; i < d.length; ++i) {
      const double v = load_element(x, o * d.length + i);
      if (is_max) {
        acc = (v > acc || std::isnan(v)) && !std::isnan(acc) ? v : acc;
      } else {
        acc += v;
        mag += std::fabs(v);
      }
    }
    ref.value[o] = acc;
    ref.scale[o] = is_max ? 0.0 : mag;
  }
  return ref;
}

}  // namespace kforge
