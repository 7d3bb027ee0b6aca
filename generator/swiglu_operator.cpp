// The swiglu operator: problem checks, cost model, reproducible workloads
// (plain and saturating gates) and the double-precision reference.
#include "generator/swiglu_operator.hpp"

#include <cmath>
#include <limits>

#include "generator/activation.hpp"
#include "generator/row_norm.hpp"
#include "generator/workload_builder.hpp"

namespace kforge {

Result<Problem> SwigluOperator::normalize(Problem p) const {
  KF_TRY_ASSIGN(checked, normalize_rows_cols(*this, std::move(p)));
  // X holds 2 cols per row: the kernels index it with 32-bit ints.
  if (2 * checked.dims["cols"] > std::numeric_limits<std::int32_t>::max()) {
    return Error::bad_input("swiglu: dimension cols = " + std::to_string(checked.dims["cols"]) +
                            " is too large (X's rows hold 2 cols elements, indexed by a 32-bit int)");
  }
  return checked;
}

void SwigluOperator::add_to(Env& env, const Problem& p) const {
  env["rows"] = p.dim("rows");
  env["cols"] = p.dim("cols");
  env["dtype_bytes"] = static_cast<std::int64_t>(dtype_bytes(p.dtype));
}

double SwigluOperator::flops(const Problem& p) const {
  const RowsCols d = rows_cols_of(p);
  return 4.0 * static_cast<double>(d.rows) * static_cast<double>(d.cols);
}

double SwigluOperator::bytes(const Problem& p) const {
  const RowsCols d = rows_cols_of(p);
  const double elem = static_cast<double>(dtype_bytes(p.dtype));
  return static_cast<double>(d.rows) * static_cast<double>(d.cols) * (2.0 * elem + 4.0);
}

Workload SwigluOperator::make_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind) const {
  const RowsCols d = rows_cols_of(p);
  Workload w;
  w.seed = seed;
  HostTensor x = random_tensor("X", p.dtype, d.rows * 2 * d.cols, tensor_stream(seed, 0));
  if (kind == WorkloadKind::kAccumulate) {
    // Gates across silu's whole shape: both tails, and past e^-a's f32 range.
    for (std::size_t i = 0; i < d.rows; ++i) {
      for (std::size_t j = 0; j < d.cols; ++j) {
        const std::size_t g = i * 2 * d.cols + j;
        const float u = load_element(x, g);
        store_element(x, g, (i * d.cols + j) % 5 == 4 ? -90.0f - 8.0f * std::fabs(u) : 24.0f * u);
      }
    }
  }
  w.tensors.push_back(std::move(x));
  HostTensor y = filled_tensor("Y", Dtype::kF32, d.rows * d.cols, std::numeric_limits<float>::quiet_NaN());
  y.is_output = true;
  w.tensors.push_back(std::move(y));
  w.output = 1;
  w.args = {scalar_i32("rows", static_cast<std::int64_t>(d.rows)),
            scalar_i32("cols", static_cast<std::int64_t>(d.cols)), tensor_arg("X", 0), tensor_arg("Y", 1)};
  return w;
}

std::vector<ArgumentSpec> SwigluOperator::arguments(const Problem& p) const {
  const RowsCols d = rows_cols_of(p);
  return {int_spec("rows", static_cast<std::int64_t>(d.rows)),
          int_spec("cols", static_cast<std::int64_t>(d.cols)),
          tensor_spec("X", p.dtype, saturating_product({d.rows, 2, d.cols})),
          tensor_spec("Y", Dtype::kF32, saturating_product({d.rows, d.cols}), true)};
}

Reference SwigluOperator::reference(const Problem& p, const Workload& w) const {
  const RowsCols d = rows_cols_of(p);
  const std::size_t n = d.rows * d.cols;
  Reference ref;
  ref.value.assign(n, std::numeric_limits<double>::quiet_NaN());
  ref.scale.assign(n, 0.0);
  // silu in f32 errs by c u |a| (generator/activation.hpp), |silu(a)| <= |a|,
  // and the product adds u: (c + 1) u |a b|, with one u to spare.
  ref.tolerance = (activation_eval_error(Activation::kSilu) + 2.0) * std::ldexp(1.0, -24);
  const std::size_t ix = tensor_named(w, "X");
  if (ix == w.tensors.size() || w.tensors[ix].elements() != 2 * n) return ref;
  const HostTensor& x = w.tensors[ix];
  for (std::size_t i = 0; i < d.rows; ++i) {
    for (std::size_t j = 0; j < d.cols; ++j) {
      const double a = load_element(x, i * 2 * d.cols + j), b = load_element(x, i * 2 * d.cols + d.cols + j);
      ref.value[i * d.cols + j] = activation_reference(Activation::kSilu, a) * b;
      ref.scale[i * d.cols + j] = std::fabs(a * b);
    }
  }
  return ref;
}

}  // namespace kforge
