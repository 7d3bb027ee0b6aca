// The layernorm operator: problem checks, cost model, reproducible workloads
// (plain and boundary) and the double-precision reference with its
// componentwise error scale.
#include "generator/layernorm_operator.hpp"

#include <cmath>
#include <limits>

#include "generator/row_norm.hpp"
#include "generator/workload_builder.hpp"

namespace kforge {

Result<Problem> LayernormOperator::normalize(Problem p) const { return normalize_rows_cols(*this, std::move(p)); }

void LayernormOperator::add_to(Env& env, const Problem& p) const {
  env["rows"] = p.dim("rows");
  env["cols"] = p.dim("cols");
  env["dtype_bytes"] = static_cast<std::int64_t>(dtype_bytes(p.dtype));
}

double LayernormOperator::flops(const Problem& p) const {
  const RowsCols d = rows_cols_of(p);
  return 8.0 * static_cast<double>(d.rows) * static_cast<double>(d.cols);
}

double LayernormOperator::bytes(const Problem& p) const {
  const RowsCols d = rows_cols_of(p);
  const double elem = static_cast<double>(dtype_bytes(p.dtype));
  const double rows = static_cast<double>(d.rows), cols = static_cast<double>(d.cols);
  return rows * cols * (elem + 4.0) + 2.0 * cols * elem;
}

Workload LayernormOperator::make_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind) const {
  return row_norm_workload(p, seed, kind, {"W", "B"});
}

std::vector<ArgumentSpec> LayernormOperator::arguments(const Problem& p) const { return row_norm_arguments(p, {"W", "B"}); }

Reference LayernormOperator::reference(const Problem& p, const Workload& w) const {
  const RowsCols d = rows_cols_of(p);
  const std::size_t n = d.rows * d.cols;
  Reference ref;
  ref.value.assign(n, std::numeric_limits<double>::quiet_NaN());
  ref.scale.assign(n, 0.0);
  // Statistics and output in f32: sums of cols terms plus a fixed number of
  // roundings (sqrt, divisions, products, the bias add): docs/tolerances.md.
  const double g = gamma_f32(static_cast<double>(d.cols) + 16.0);
  ref.tolerance = g;
  const std::size_t ix = tensor_named(w, "X"), iw = tensor_named(w, "W"), ib = tensor_named(w, "B");
  if (ix == w.tensors.size() || iw == w.tensors.size() || ib == w.tensors.size() ||
      w.tensors[ix].elements() != n || w.tensors[iw].elements() != d.cols ||
      w.tensors[ib].elements() != d.cols) {
    return ref;  // a workload for another problem: NaN fails every comparison
  }
  const double eps = scalar_named(w, "eps");
  const HostTensor& tx = w.tensors[ix];
  std::vector<double> wt(d.cols), bt(d.cols), x(d.cols);
  for (std::size_t j = 0; j < d.cols; ++j) {
    wt[j] = load_element(w.tensors[iw], j);
    bt[j] = load_element(w.tensors[ib], j);
  }
  const double cols = static_cast<double>(d.cols);
  for (std::size_t i = 0; i < d.rows; ++i) {
    double sum = 0.0, abs_sum = 0.0;
    for (std::size_t j = 0; j < d.cols; ++j) {
      x[j] = load_element(tx, i * d.cols + j);
      sum += x[j];
      abs_sum += std::fabs(x[j]);
    }
    const double mean = sum / cols;
    double sq = 0.0;
    for (std::size_t j = 0; j < d.cols; ++j) sq += (x[j] - mean) * (x[j] - mean);
    const double var = sq / cols;
    const double r = 1.0 / std::sqrt(var + eps);
    const double a = abs_sum / cols;  // the magnitude the mean is summed from
    // The error in the mean (<= g a) shifts every deviation and adds its square
    // to the variance: relative g * (g a)^2 / (var + eps) on 1 / sqrt(.).
    const double cancel = 1.0 + g * a * a / (var + eps);
    for (std::size_t j = 0; j < d.cols; ++j) {
      const double dev = x[j] - mean;
      ref.value[i * d.cols + j] = dev * r * wt[j] + bt[j];
      ref.scale[i * d.cols + j] = std::fabs(wt[j]) * r * (a + std::fabs(dev) * cancel) + std::fabs(bt[j]);
    }
  }
  return ref;
}

}  // namespace kforge
