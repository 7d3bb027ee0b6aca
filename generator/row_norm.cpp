// Problem checks and boundary inputs shared by layernorm and rmsnorm.
#include "generator/row_norm.hpp"

#include <cmath>
#include <limits>
#include <string>

namespace kforge {

RowsCols rows_cols_of(const Problem& p) {
  auto get = [&](const char* n) {
    const std::int64_t v = p.dim(n);
    return static_cast<std::size_t>(v > 0 ? v : 0);
  };
  return {get("rows"), get("cols")};
}

std::vector<ArgumentSpec> row_norm_arguments(const Problem& p,
                                             const std::vector<std::string>& column_vectors) {
  const RowsCols d = rows_cols_of(p);
  std::vector<ArgumentSpec> args = {int_spec("rows", static_cast<std::int64_t>(d.rows)),
                                    int_spec("cols", static_cast<std::int64_t>(d.cols)), float_spec("eps"),
                                    tensor_spec("X", p.dtype, saturating_product({d.rows, d.cols}))};
  for (const auto& name : column_vectors) args.push_back(tensor_spec(name, p.dtype, d.cols));
  args.push_back(tensor_spec("Y", Dtype::kF32, saturating_product({d.rows, d.cols}), true));
  return args;
}

Workload row_norm_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind,
                           const std::vector<std::string>& column_vectors) {
  const RowsCols d = rows_cols_of(p);
  Workload w;
  w.seed = seed;
  w.tensors.push_back(random_tensor("X", p.dtype, d.rows * d.cols, tensor_stream(seed, 0)));
  if (kind == WorkloadKind::kAccumulate)
    fill_boundary_rows(w.tensors[0], d.rows, d.cols, tensor_stream(seed, 3));
  for (std::size_t i = 0; i < column_vectors.size(); ++i) {
    w.tensors.push_back(random_tensor(column_vectors[i], p.dtype, d.cols, tensor_stream(seed, 1 + i)));
  }
  HostTensor y = filled_tensor("Y", Dtype::kF32, d.rows * d.cols, std::numeric_limits<float>::quiet_NaN());
  y.is_output = true;
  w.tensors.push_back(std::move(y));
  w.output = w.tensors.size() - 1;
  w.args = {scalar_i32("rows", static_cast<std::int64_t>(d.rows)),
            scalar_i32("cols", static_cast<std::int64_t>(d.cols)), scalar_f32("eps", kRowNormEps)};
  for (std::size_t i = 0; i < w.tensors.size(); ++i) w.args.push_back(tensor_arg(w.tensors[i].name, i));
  return w;
}

Result<Problem> normalize_rows_cols(const Operator& op, Problem p) {
  const std::string who(op.name());
  if (p.op.empty()) p.op = who;
  if (p.op != who) return Error::bad_input(who + ": problem is for operator '" + p.op + "'");
  KF_TRY(normalize_attributes(op, p));
  if (p.layout.trans_a || p.layout.trans_b) {
    return Error::bad_input(who + ": layout " + p.layout.name() + " is not supported (" + who +
                            " reads row-major X only: NN)");
  }
  for (const auto& [name, value] : p.dims) {
    if (name != "rows" && name != "cols") {
      return Error::bad_input(who + ": unknown dimension '" + name + "' (" + who + " reads rows, cols)");
    }
  }
  for (const char* name : {"rows", "cols"}) {
    auto it = p.dims.find(name);
    if (it == p.dims.end()) return Error::bad_input(who + ": dimension " + name + " is missing");
    if (it->second <= 0) {
      return Error::bad_input(who + ": dimension " + name + " must be positive, got " +
                              std::to_string(it->second));
    }
    if (it->second > std::numeric_limits<std::int32_t>::max()) {
      return Error::bad_input(who + ": dimension " + name + " = " + std::to_string(it->second) +
                              " does not fit a 32-bit kernel argument");
    }
  }
  std::int64_t bytes = 0;
  if (__builtin_mul_overflow(p.dims["rows"], p.dims["cols"], &bytes) ||
      __builtin_mul_overflow(bytes, std::int64_t{4}, &bytes)) {
    return Error::bad_input(who + ": problem " + p.dims_string() + " is too large to address");
  }
  return p;
}

BoundaryRow boundary_row_kind(std::size_t row) {
  static constexpr BoundaryRow kCycle[] = {BoundaryRow::kOffset, BoundaryRow::kConstant, BoundaryRow::kLarge,
                                           BoundaryRow::kTiny, BoundaryRow::kUniform};
  return kCycle[row % 5];
}

void fill_boundary_rows(HostTensor& x, std::size_t rows, std::size_t cols, SplitMix64 rng) {
  const float large = x.dtype == Dtype::kF16 ? 16384.0f : 1099511627776.0f;  // 2^14, 2^40
  const float tiny = 1.0f / 256.0f;
  for (std::size_t r = 0; r < rows; ++r) {
    const BoundaryRow kind = boundary_row_kind(r);
    const float constant = 8.0f * rng.symmetric_unit();
    for (std::size_t c = 0; c < cols; ++c) {
      const float u = rng.symmetric_unit();
      float v = u;
      switch (kind) {
        case BoundaryRow::kOffset:
          v = 64.0f + u;
          break;
        case BoundaryRow::kConstant:
          v = constant;
          break;
        case BoundaryRow::kLarge:
          v = u * large;
          break;
        case BoundaryRow::kTiny:
          v = std::copysign(0.5f + 0.5f * std::fabs(u), u) * tiny;
          break;
        case BoundaryRow::kUniform:
          break;
      }
      store_element(x, r * cols + c, v);
    }
  }
}

double gamma_f32(double n) {
  const double nu = n * std::ldexp(1.0, -24);
  return nu < 0.5 ? nu / (1.0 - nu) : 1.0;
}

}  // namespace kforge
