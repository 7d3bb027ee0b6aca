// The rmsnorm operator: problem checks, cost model, reproducible workloads
// (plain and boundary) and the double-precision reference.
#include "generator/rmsnorm_operator.hpp"

#include <cmath>
#include <limits>

#include "generator/row_norm.hpp"
#include "generator/workload_builder.hpp"

namespace kforge {

Result<Problem> RmsnormOperator::normalize(Problem p) const { return normalize_rows_cols(*this, std::move(p)); }

void RmsnormOperator::add_to(Env& env, const Problem& p) const {
  env["rows"] = p.dim("rows");
  env["cols"] = p.dim("cols");
  env["dtype_bytes"] = static_cast<std::int64_t>(dtype_bytes(p.dtype));
}

double RmsnormOperator::flops(const Problem& p) const {
  const RowsCols d = rows_cols_of(p);
  return 4.0 * static_cast<double>(d.rows) * static_cast<double>(d.cols);
}

double RmsnormOperator::bytes(const Problem& p) const {
  const RowsCols d = rows_cols_of(p);
  const double elem = static_cast<double>(dtype_bytes(p.dtype));
  const double rows = static_cast<double>(d.rows), cols = static_cast<double>(d.cols);
  return rows * cols * (elem + 4.0) + cols * elem;
}

Workload RmsnormOperator::make_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind) const {
  return row_norm_workload(p, seed, kind, {"W"});
}

std::vector<ArgumentSpec> RmsnormOperator::arguments(const Problem& p) const { return row_norm_arguments(p, {"W"}); }

Reference RmsnormOperator::reference(const Problem& p, const Workload& w) const {
  const RowsCols d = rows_cols_of(p);
  const std::size_t n = d.rows * d.cols;
  Reference ref;
  ref.value.assign(n, std::numeric_limits<double>::quiet_NaN());
  ref.scale.assign(n, 0.0);
  // A sum of cols non-negative squares plus a fixed number of roundings
  // (square root, division, two products): docs/tolerances.md.
  ref.tolerance = gamma_f32(static_cast<double>(d.cols) + 16.0);
  const std::size_t ix = tensor_named(w, "X"), iw = tensor_named(w, "W");
  if (ix == w.tensors.size() || iw == w.tensors.size() || w.tensors[ix].elements() != n ||
      w.tensors[iw].elements() != d.cols) {
    return ref;  // a workload for another problem: NaN fails every comparison
  }
  const double eps = scalar_named(w, "eps");
  const HostTensor& tx = w.tensors[ix];
  std::vector<double> wt(d.cols), x(d.cols);
  for (std::size_t j = 0; j < d.cols; ++j) wt[j] = load_element(w.tensors[iw], j);
  for (std::size_t i = 0; i < d.rows; ++i) {
    double sq = 0.0;
    for (std::size_t j = 0; j < d.cols; ++j) {
      x[j] = load_element(tx, i * d.cols + j);
      sq += x[j] * x[j];
    }
    const double r = 1.0 / std::sqrt(sq / static_cast<double>(d.cols) + eps);
    for (std::size_t j = 0; j < d.cols; ++j) {
      ref.value[i * d.cols + j] = x[j] * r * wt[j];
      ref.scale[i * d.cols + j] = std::fabs(x[j] * r * wt[j]);
    }
  }
  return ref;
}

}  // namespace kforge
