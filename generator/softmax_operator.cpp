// The softmax operator: problem checks, cost, workloads and the double
// reference with its derived tolerance (docs/tolerances.md).
#include "generator/softmax_operator.hpp"

#include <cmath>
#include <limits>

#include "generator/workload_builder.hpp"

namespace kforge {

namespace {

std::size_t dim_of(const Problem& p, const char* name) {
  const std::int64_t v = p.dim(name);
  return static_cast<std::size_t>(v > 0 ? v : 0);
}

}  // namespace

Result<Problem> SoftmaxOperator::normalize(Problem p) const {
  if (p.op.empty()) p.op = "softmax";
  if (p.op != "softmax") return Error::bad_input("softmax: problem is for operator '" + p.op + "'");
  KF_TRY(normalize_attributes(*this, p));
  if (p.layout.trans_a || p.layout.trans_b) {
    return Error::bad_input("softmax: layout " + p.layout.name() + " is not supported (softmax reads NN only)");
  }
  for (const auto& [name, value] : p.dims) {
    if (name != "rows" && name != "cols") {
      return Error::bad_input("softmax: unknown dimension '" + name + "' (softmax reads rows, cols)");
    }
  }
  for (const char* name : {"rows", "cols"}) {
    auto it = p.dims.find(name);
    if (it == p.dims.end()) return Error::bad_input(std::string("softmax: dimension ") + name + " is missing");
    if (it->second <= 0) {
      return Error::bad_input(std::string("softmax: dimension ") + name + " must be positive, got " +
                              std::to_string(it->second));
    }
  }
  std::int64_t n = 0;
  if (__builtin_mul_overflow(p.dims["rows"], p.dims["cols"], &n) || n > (std::int64_t{1} << 30)) {
    return Error::bad_input("softmax: problem " + p.dims_string() + " has more than 2^30 elements");
  }
  return p;
}

void SoftmaxOperator::add_to(Env& env, const Problem& p) const {
  env["rows"] = p.dim("rows");
  env["cols"] = p.dim("cols");
  env["dtype_bytes"] = static_cast<std::int64_t>(dtype_bytes(p.dtype));
}

double SoftmaxOperator::flops(const Problem& p) const {
  return 5.0 * static_cast<double>(dim_of(p, "rows")) * static_cast<double>(dim_of(p, "cols"));
}

double SoftmaxOperator::bytes(const Problem& p) const {
  return static_cast<double>(dim_of(p, "rows")) * static_cast<double>(dim_of(p, "cols")) *
         (static_cast<double>(dtype_bytes(p.dtype)) + 4.0);
}

Workload SoftmaxOperator::make_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind) const {
  const std::size_t rows = dim_of(p, "rows"), cols = dim_of(p, "cols"), n = rows * cols;
  Workload w;
  w.seed = seed;
  HostTensor x = random_tensor("X", p.dtype, n, tensor_stream(seed, 0));
  if (kind == WorkloadKind::kAccumulate) {
    // The second run: boundary rows, cycling: all negative and far from zero
    // (-100 + U), large spread (8 U, so exp spans e^-16..1), ascending (a new
    // maximum at every element: the worst case for online rescaling), U.
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t c = 0; c < cols; ++c) {
        const std::size_t i = r * cols + c;
        const float u = load_element(x, i);
        float v = u;
        switch (r % 4) {
          case 0: v = -100.0f + u; break;
          case 1: v = 8.0f * u; break;
          case 2: v = -4.0f + 8.0f * static_cast<float>(c) / static_cast<float>(cols); break;
          case 3: v = u; break;
        }
        store_element(x, i, v);
      }
    }
  }
  w.tensors.push_back(std::move(x));
  HostTensor y = filled_tensor("Y", Dtype::kF32, n, std::numeric_limits<float>::quiet_NaN());
  y.is_output = true;
  w.tensors.push_back(std::move(y));
  w.tensors.push_back(zero_workspace("partials", rows * 2 * kSoftmaxMaxSplit));
  w.tensors.push_back(zero_workspace("counters", rows));
  w.output = 1;
  w.args = {scalar_i32("rows", static_cast<std::int64_t>(rows)),
            scalar_i32("cols", static_cast<std::int64_t>(cols)),
            tensor_arg("X", 0),
            tensor_arg("Y", 1),
            tensor_arg("partials", 2),
            tensor_arg("counters", 3)};
  return w;
}

std::vector<ArgumentSpec> SoftmaxOperator::arguments(const Problem& p) const {
  const std::size_t rows = dim_of(p, "rows"), cols = dim_of(p, "cols");
  return {int_spec("rows", static_cast<std::int64_t>(rows)),
          int_spec("cols", static_cast<std::int64_t>(cols)),
          tensor_spec("X", p.dtype, saturating_product({rows, cols})),
          tensor_spec("Y", Dtype::kF32, saturating_product({rows, cols}), true),
          tensor_spec("partials", Dtype::kF32, saturating_product({rows, 2, kSoftmaxMaxSplit})),
          tensor_spec("counters", Dtype::kF32, rows)};
}

Reference SoftmaxOperator::reference(const Problem& p, const Workload& w) const {
  const std::size_t rows = dim_of(p, "rows"), cols = dim_of(p, "cols"), n = rows * cols;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Reference ref;
  ref.value.assign(n, nan);
  ref.scale.assign(n, 0.0);
  // Per element, relative to y: (|x - m| + 10 n + 100) u, first order, for
  // any summation order and online rescaling (docs/tolerances.md); the
  // factor 2 covers the second-order terms while that sum times u <= 1/2.
  ref.tolerance = 2.0 * unit_roundoff(Dtype::kF32);
  if (w.tensors.empty() || w.tensors[0].elements() != n) return ref;
  const HostTensor& x = w.tensors[0];
  const double c = 10.0 * static_cast<double>(cols) + 100.0;
  std::vector<double> row(cols);
  for (std::size_t r = 0; r < rows; ++r) {
    double m = -std::numeric_limits<double>::infinity();
    bool has_nan = false;
    for (std::size_t j = 0; j < cols; ++j) {
      row[j] = load_element(x, r * cols + j);
      has_nan = has_nan || std::isnan(row[j]);
      m = std::max(m, row[j]);
    }
    if (has_nan || std::isinf(m)) continue;  // NaN row by contract
    double s = 0.0;
    for (std::size_t j = 0; j < cols; ++j) s += std::exp(row[j] - m);
    for (std::size_t j = 0; j < cols; ++j) {
      const double y = std::exp(row[j] - m) / s;
      ref.value[r * cols + j] = y;
      ref.scale[r * cols + j] = y == 0.0 ? 0.0 : y * (std::fabs(row[j] - m) + c);  // -Inf gives exactly 0
    }
  }
  return ref;
}

}  // namespace kforge
