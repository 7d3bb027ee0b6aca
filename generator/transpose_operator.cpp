// The transpose operator: problem checks, cost, workloads and the exact reference.
#include "generator/transpose_operator.hpp"

#include <cmath>
#include <limits>

#include "generator/workload_builder.hpp"

namespace kforge {

namespace {

struct Dims {
  std::size_t rows, cols, batch;
};

Dims dims_of(const Problem& p) {
  auto get = [&](const char* name, std::int64_t fallback) {
    auto it = p.dims.find(name);
    const std::int64_t v = it == p.dims.end() ? fallback : it->second;
    return static_cast<std::size_t>(v > 0 ? v : 0);
  };
  return {get("rows", 0), get("cols", 0), get("batch", 1)};
}

}  // namespace

Result<Problem> TransposeOperator::normalize(Problem p) const {
  if (p.op.empty()) p.op = "transpose";
  if (p.op != "transpose") return Error::bad_input("transpose: problem is for operator '" + p.op + "'");
  KF_TRY(normalize_attributes(*this, p));
  if (p.layout.trans_a || p.layout.trans_b) {
    return Error::bad_input("transpose: layout " + p.layout.name() + " is not supported (transpose reads NN only)");
  }
  for (const auto& [name, value] : p.dims) {
    if (name != "rows" && name != "cols" && name != "batch") {
      return Error::bad_input("transpose: unknown dimension '" + name + "' (transpose reads rows, cols, batch)");
    }
  }
  p.dims.emplace("batch", 1);
  for (const char* name : {"rows", "cols", "batch"}) {
    auto it = p.dims.find(name);
    if (it == p.dims.end()) return Error::bad_input(std::string("transpose: dimension ") + name + " is missing");
    if (it->second <= 0) {
      return Error::bad_input(std::string("transpose: dimension ") + name + " must be positive, got " +
                              std::to_string(it->second));
    }
    if (it->second > std::numeric_limits<std::int32_t>::max()) {
      return Error::bad_input(std::string("transpose: dimension ") + name + " = " + std::to_string(it->second) +
                              " does not fit a 32-bit kernel argument");
    }
  }
  std::int64_t bytes = 0;
  if (__builtin_mul_overflow(p.dims["rows"], p.dims["cols"], &bytes) ||
      __builtin_mul_overflow(bytes, p.dims["batch"], &bytes) ||
      __builtin_mul_overflow(bytes, std::int64_t{4}, &bytes)) {
    return Error::bad_input("transpose: problem " + p.dims_string() + " is too large to address");
  }
  return p;
}

void TransposeOperator::add_to(Env& env, const Problem& p) const {
  const Dims d = dims_of(p);
  env["rows"] = static_cast<std::int64_t>(d.rows);
  env["cols"] = static_cast<std::int64_t>(d.cols);
  env["batch"] = static_cast<std::int64_t>(d.batch);
  env["dtype_bytes"] = static_cast<std::int64_t>(dtype_bytes(p.dtype));
}

double TransposeOperator::bytes(const Problem& p) const {
  const Dims d = dims_of(p);
  return static_cast<double>(d.rows) * static_cast<double>(d.cols) * static_cast<double>(d.batch) *
         (static_cast<double>(dtype_bytes(p.dtype)) + 4.0);
}

Workload TransposeOperator::make_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind) const {
  const Dims d = dims_of(p);
  const std::size_t n = d.rows * d.cols * d.batch;
  Workload w;
  w.seed = seed;
  HostTensor x = random_tensor("X", p.dtype, n, tensor_stream(seed, 0));
  if (kind == WorkloadKind::kAccumulate) {
    // The second run: large magnitudes, so that a value landing in the wrong
    // place is never hidden by a small neighbour, and every element distinct.
    const float big = p.dtype == Dtype::kF16 ? 16384.0f : 1099511627776.0f;
    for (std::size_t i = 0; i < n; ++i) store_element(x, i, load_element(x, i) * big);
  }
  w.tensors.push_back(std::move(x));
  HostTensor y = filled_tensor("Y", Dtype::kF32, n, std::numeric_limits<float>::quiet_NaN());
  y.is_output = true;
  w.tensors.push_back(std::move(y));
  w.output = 1;
  w.args = {scalar_i32("rows", static_cast<std::int64_t>(d.rows)),
            scalar_i32("cols", static_cast<std::int64_t>(d.cols)), tensor_arg("X", 0), tensor_arg("Y", 1)};
  return w;
}

std::vector<ArgumentSpec> TransposeOperator::arguments(const Problem& p) const {
  const Dims d = dims_of(p);
  const std::uint64_t n = saturating_product({d.rows, d.cols, d.batch});
  return {int_spec("rows", static_cast<std::int64_t>(d.rows)),
          int_spec("cols", static_cast<std::int64_t>(d.cols)), tensor_spec("X", p.dtype, n),
          tensor_spec("Y", Dtype::kF32, n, true)};
}

Reference TransposeOperator::reference(const Problem& p, const Workload& w) const {
  const Dims d = dims_of(p);
  const std::size_t n = d.rows * d.cols * d.batch;
  Reference ref;
  ref.value.assign(n, std::numeric_limits<double>::quiet_NaN());
  ref.scale.assign(n, 0.0);
  ref.tolerance = 0.0;  // a widening copy is exact
  if (w.tensors.size() < 2 || w.tensors[0].elements() != n || w.tensors[1].elements() != n) return ref;
  const HostTensor& x = w.tensors[0];
  for (std::size_t b = 0; b < d.batch; ++b) {
    const std::size_t off = b * d.rows * d.cols;
    for (std::size_t i = 0; i < d.rows; ++i) {
      for (std::size_t j = 0; j < d.cols; ++j) {
        ref.value[off + j * d.rows + i] = load_element(x, off + i * d.cols + j);
      }
    }
  }
  return ref;
}

}  // namespace kforge
