// The gemm operator: problem checks, cost model, reproducible workloads and the
// double-precision host reference.
#include "generator/gemm_operator.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/parallel_for.hpp"
#include "generator/activation.hpp"
#include "generator/workload_builder.hpp"

namespace kforge {

namespace {

struct GemmDims {
  std::size_t m, n, k, batch;
};

/// Dims of a problem; batch defaults to 1 so that an un-normalized problem still works.
GemmDims dims_of(const Problem& p) {
  auto get = [&](const char* name, std::int64_t fallback) {
    auto it = p.dims.find(name);
    std::int64_t v = it == p.dims.end() ? fallback : it->second;
    return static_cast<std::size_t>(v > 0 ? v : 0);
  };
  return {get("M", 0), get("N", 0), get("K", 0), get("batch", 1)};
}

/// A tile of C in the reference: its sums (acc and mag, 64 x 256 doubles each)
/// are 256 KiB, within one core's L2, and each row segment of op(B) read from
/// memory (256 doubles and their magnitudes, 4 KiB) serves 64 rows.
constexpr std::size_t kReferenceRows = 64;
constexpr std::size_t kReferenceCols = 256;

/// Four doubles in one vector register (AVX2), or two halves of it where the
/// host has only SSE2 or NEON: GCC and Clang lower the operations either way.
typedef double Double4 __attribute__((vector_size(32)));

/// The sums of a micro-tile of R rows x 8 columns over a block of `kb` k:
/// its values and magnitudes (4R vectors) stay in registers across the k
/// loop, where a loop over whole rows would load and store them at every k.
/// `a` is the first row at the block's first k (row stride k); `panel` and
/// `panel_abs` hold the block's rows of op(B) and |op(B)| for the 8 columns,
/// packed (row stride 8). Always inlined, so that it is built for each
/// target of accumulate_tile.
template <std::size_t R>
__attribute__((always_inline)) inline void accumulate_micro(const double* a, std::size_t k, const double* panel,
                                                            const double* panel_abs, std::size_t kb, double* acc,
                                                            double* mag, std::size_t ld) {
  Double4 s[R][2], t[R][2];
  for (std::size_t r = 0; r < R; ++r) {
    std::memcpy(s[r], acc + r * ld, sizeof s[r]);
    std::memcpy(t[r], mag + r * ld, sizeof t[r]);
  }
  for (std::size_t kk = 0; kk < kb; ++kk) {
    Double4 b0, b1, c0, c1;
    std::memcpy(&b0, panel + 8 * kk, sizeof b0);
    std::memcpy(&b1, panel + 8 * kk + 4, sizeof b1);
    std::memcpy(&c0, panel_abs + 8 * kk, sizeof c0);
    std::memcpy(&c1, panel_abs + 8 * kk + 4, sizeof c1);
    for (std::size_t r = 0; r < R; ++r) {
      const double x = a[r * k + kk], x_abs = std::fabs(x);
      s[r][0] += x * b0;
      s[r][1] += x * b1;
      t[r][0] += x_abs * c0;
      t[r][1] += x_abs * c1;
    }
  }
  for (std::size_t r = 0; r < R; ++r) {
    std::memcpy(acc + r * ld, s[r], sizeof s[r]);
    std::memcpy(mag + r * ld, t[r], sizeof t[r]);
  }
}

/// The k blocks of accumulate_tile: a block's packed rows of op(B) for 8
/// columns (2 x 16 KiB) stay in L1 while every micro-tile of the tile's rows
/// uses them. Packed, because the rows of a column panel lie n apart, which
/// for a power-of-two n maps them onto a few cache sets.
constexpr std::size_t kReferenceBlockK = 256;

/// acc += A_tile * B_panel and mag += |A_tile| * |B_panel| over all k, for a
/// tile of `rows` rows (A row-major with row stride k) and `cols` columns (B
/// and |B| row-major with row stride n). Built for AVX2 as well where the
/// compiler can (chosen at run time). Every element sums its products in k
/// order, each multiply and add rounded on its own (never fused: this file
/// is built with -ffp-contract=off, and AVX2 alone has no FMA), so the sums
/// are the same bits for any blocking and on every host.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
__attribute__((target_clones("avx2", "default")))
#endif
void accumulate_tile(const double* a, std::size_t k, const double* b, const double* b_abs, std::size_t n,
                     std::size_t rows, std::size_t cols, double* acc, double* mag) {
  const std::size_t wide = cols / 8 * 8;
  std::vector<double> panel(8 * kReferenceBlockK), panel_abs(8 * kReferenceBlockK);
  for (std::size_t k0 = 0; k0 < k; k0 += kReferenceBlockK) {
    const std::size_t kb = std::min(kReferenceBlockK, k - k0);
    for (std::size_t j = 0; j < wide; j += 8) {
      for (std::size_t kk = 0; kk < kb; ++kk) {
        std::memcpy(&panel[8 * kk], b + (k0 + kk) * n + j, 8 * sizeof(double));
        std::memcpy(&panel_abs[8 * kk], b_abs + (k0 + kk) * n + j, 8 * sizeof(double));
      }
      std::size_t r = 0;
      for (; r + 2 <= rows; r += 2) {
        accumulate_micro<2>(a + r * k + k0, k, panel.data(), panel_abs.data(), kb, acc + r * cols + j,
                            mag + r * cols + j, cols);
      }
      for (; r < rows; ++r) {
        accumulate_micro<1>(a + r * k + k0, k, panel.data(), panel_abs.data(), kb, acc + r * cols + j,
                            mag + r * cols + j, cols);
      }
    }
    // The last columns (fewer than 8), one at a time.
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t j = wide; j < cols; ++j) {
        double s = acc[r * cols + j], t = mag[r * cols + j];
        for (std::size_t kk = k0; kk < k0 + kb; ++kk) {
          const double x = a[r * k + kk];
          s += x * b[kk * n + j];
          t += std::fabs(x) * b_abs[kk * n + j];
        }
        acc[r * cols + j] = s;
        mag[r * cols + j] = t;
      }
    }
  }
}

/// Groups the workloads of one problem by their A and B, whose products are
/// computed once per group. Each reference starts as NaN with its tolerance;
/// a workload for another problem joins no group and keeps NaN, which fails
/// every comparison.
std::vector<std::vector<std::size_t>> input_groups(const GemmDims& d, const std::vector<const Workload*>& ws,
                                                   double tolerance, std::vector<Reference>& refs) {
  const std::size_t mn = d.m * d.n * d.batch;
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < ws.size(); ++i) {
    refs[i].value.assign(mn, std::numeric_limits<double>::quiet_NaN());
    refs[i].scale.assign(mn, 0.0);
    refs[i].tolerance = tolerance;
    const Workload& w = *ws[i];
    if (w.tensors.size() < 4 || w.tensors[0].elements() != d.m * d.k * d.batch ||
        w.tensors[1].elements() != d.k * d.n * d.batch || w.tensors[2].elements() != mn ||
        w.tensors[3].elements() != d.n) {
      continue;
    }
    auto same_inputs = [&](const std::vector<std::size_t>& g) {
      const Workload& v = *ws[g.front()];
      return v.tensors[0].dtype == w.tensors[0].dtype && v.tensors[0].bytes == w.tensors[0].bytes &&
             v.tensors[1].dtype == w.tensors[1].dtype && v.tensors[1].bytes == w.tensors[1].bytes;
    };
    auto g = std::find_if(groups.begin(), groups.end(), same_inputs);
    if (g == groups.end()) {
      groups.push_back({i});
    } else {
      g->push_back(i);
    }
  }
  return groups;
}

/// One batch of op(A) as M x K and of op(B) and |op(B)| as K x N, row-major,
/// so the reference's i-k-j loop streams.
void load_operands(const HostTensor& ta, const HostTensor& tb, const Layout& layout, const GemmDims& d,
                   std::size_t batch, std::vector<double>& a, std::vector<double>& b, std::vector<double>& b_abs) {
  const std::size_t m = d.m, n = d.n, k = d.k;
  const std::size_t a_off = batch * m * k, b_off = batch * k * n;
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t kk = 0; kk < k; ++kk) {
      a[i * k + kk] = load_element(ta, a_off + (layout.trans_a ? kk * m + i : i * k + kk));
    }
  }
  for (std::size_t kk = 0; kk < k; ++kk) {
    for (std::size_t j = 0; j < n; ++j) {
      const double v = load_element(tb, b_off + (layout.trans_b ? j * k + kk : kk * n + j));
      b[kk * n + j] = v;
      b_abs[kk * n + j] = std::fabs(v);
    }
  }
}

/// A workload's own terms, read once rather than in every tile.
struct GemmTerms {
  double alpha, beta;
  const float* c;
  const float* bias;
};

/// Where a tile of C lies: rows i0.., columns j0.., in the batch at c_off.
struct TileSpan {
  std::size_t i0, rows, j0, cols, c_off, n;
};

/// The epilogue and its error bound: the activation's Lipschitz bound, and
/// its own f32 evaluation error c * u * |pre| written against the tolerance
/// (>= ops * u) as (c / ops) * |pre| (docs/tolerances.md).
struct EpilogueBound {
  Epilogue ep;
  double lipschitz, eval;
};

/// alpha * acc + beta * C + bias through the activation, and its scale, for
/// every element of a tile, into `ref`.
void finish_tile(const TileSpan& t, const double* acc, const double* mag, const GemmTerms& terms,
                 const EpilogueBound& e, Reference& ref) {
  for (std::size_t r = 0; r < t.rows; ++r) {
    for (std::size_t jj = 0; jj < t.cols; ++jj) {
      const std::size_t j = t.j0 + jj;
      const std::size_t idx = t.c_off + (t.i0 + r) * t.n + j;
      double value = terms.alpha * acc[r * t.cols + jj];
      double scale = std::fabs(terms.alpha) * mag[r * t.cols + jj];
      if (terms.beta != 0.0) {  // BLAS convention: C is not read when beta == 0
        const double c = terms.c[idx];
        value += terms.beta * c;
        scale += std::fabs(terms.beta) * std::fabs(c);
      }
      if (e.ep.bias) {
        const double bj = terms.bias[j];
        value += bj;
        scale += std::fabs(bj);
      }
      ref.value[idx] = activation_reference(e.ep.activation, value);
      ref.scale[idx] = e.lipschitz * scale + e.eval * std::fabs(value);
    }
  }
}

}  // namespace

Result<Problem> GemmOperator::normalize(Problem p) const {
  if (p.op.empty()) p.op = "gemm";
  if (p.op != "gemm") return Error::bad_input("gemm: problem is for operator '" + p.op + "'");
  KF_TRY(normalize_attributes(*this, p));
  for (const auto& [name, value] : p.dims) {
    if (name != "M" && name != "N" && name != "K" && name != "batch") {
      return Error::bad_input("gemm: unknown dimension '" + name + "' (gemm reads M, N, K, batch)");
    }
  }
  p.dims.emplace("batch", 1);
  for (const char* name : {"M", "N", "K", "batch"}) {
    auto it = p.dims.find(name);
    if (it == p.dims.end()) return Error::bad_input(std::string("gemm: dimension ") + name + " is missing");
    if (it->second <= 0) {
      return Error::bad_input(std::string("gemm: dimension ") + name + " must be positive, got " +
                              std::to_string(it->second));
    }
    if (it->second > std::numeric_limits<std::int32_t>::max()) {
      return Error::bad_input(std::string("gemm: dimension ") + name + " = " + std::to_string(it->second) +
                              " does not fit a 32-bit kernel argument");
    }
  }
  // Every buffer's byte size must fit in 64 bits.
  const std::int64_t m = p.dims["M"], n = p.dims["N"], k = p.dims["K"], b = p.dims["batch"];
  for (auto [x, y] : {std::pair{m, k}, std::pair{k, n}, std::pair{m, n}}) {
    std::int64_t bytes = 0;
    if (__builtin_mul_overflow(x, y, &bytes) || __builtin_mul_overflow(bytes, b, &bytes) ||
        __builtin_mul_overflow(bytes, std::int64_t{4}, &bytes)) {
      return Error::bad_input("gemm: problem " + p.dims_string() + " is too large to address");
    }
  }
  return p;
}

std::vector<std::string> GemmOperator::extra_names() const {
  return {"trans_a", "trans_b", "dtype_bytes", "bias", "activation"};
}

void GemmOperator::add_to(Env& env, const Problem& p) const {
  for (const char* name : {"M", "N", "K"}) env[name] = p.dim(name);
  auto batch = p.dims.find("batch");
  env["batch"] = batch == p.dims.end() ? 1 : batch->second;
  env["trans_a"] = p.layout.trans_a ? 1 : 0;
  env["trans_b"] = p.layout.trans_b ? 1 : 0;
  env["dtype_bytes"] = static_cast<std::int64_t>(dtype_bytes(p.dtype));
  env["bias"] = p.epilogue.bias ? 1 : 0;
  env["activation"] = static_cast<std::int64_t>(p.epilogue.activation);
}

double GemmOperator::flops(const Problem& p) const {
  const GemmDims d = dims_of(p);
  return 2.0 * static_cast<double>(d.m) * static_cast<double>(d.n) * static_cast<double>(d.k) *
         static_cast<double>(d.batch);
}

double GemmOperator::bytes(const Problem& p) const {
  const GemmDims d = dims_of(p);
  const double m = static_cast<double>(d.m), n = static_cast<double>(d.n), k = static_cast<double>(d.k);
  const double elem = static_cast<double>(dtype_bytes(p.dtype));
  return static_cast<double>(d.batch) * ((m * k + k * n) * elem + m * n * 4.0) +
         (p.epilogue.bias ? n * 4.0 : 0.0);
}

Workload GemmOperator::make_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind) const {
  const GemmDims d = dims_of(p);
  Workload w;
  w.seed = seed;
  w.tensors.push_back(random_tensor("A", p.dtype, d.m * d.k * d.batch, tensor_stream(seed, 0)));
  w.tensors.push_back(random_tensor("B", p.dtype, d.k * d.n * d.batch, tensor_stream(seed, 1)));
  const std::size_t c_elems = d.m * d.n * d.batch;
  const bool accumulate = kind == WorkloadKind::kAccumulate;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  HostTensor c = accumulate ? random_tensor("C", Dtype::kF32, c_elems, tensor_stream(seed, 2))
                            : filled_tensor("C", Dtype::kF32, c_elems, nan);
  c.is_output = true;
  w.tensors.push_back(std::move(c));
  w.output = 2;
  // Without a bias in the epilogue the bias must not be read: NaN would show it.
  w.tensors.push_back(p.epilogue.bias ? random_tensor("bias", Dtype::kF32, d.n, tensor_stream(seed, 3))
                                      : filled_tensor("bias", Dtype::kF32, d.n, nan));
  w.args = {scalar_i32("M", static_cast<std::int64_t>(d.m)),
            scalar_i32("N", static_cast<std::int64_t>(d.n)),
            scalar_i32("K", static_cast<std::int64_t>(d.k)),
            scalar_f32("alpha", accumulate ? 0.75f : 1.5f),
            tensor_arg("A", 0),
            tensor_arg("B", 1),
            scalar_f32("beta", accumulate ? -0.5f : 0.0f),
            tensor_arg("C", 2),
            tensor_arg("bias", 3)};
  return w;
}

std::vector<ArgumentSpec> GemmOperator::arguments(const Problem& p) const {
  const GemmDims d = dims_of(p);
  ArgumentSpec bias = tensor_spec("bias", Dtype::kF32, d.n);
  bias.accessed = p.epilogue.bias;
  // Row-major operands, transposed as the layout says (load_operands).
  ArgumentSpec a = tensor_spec("A", p.dtype, saturating_product({d.m, d.k, d.batch}));
  a.shape = {d.batch, p.layout.trans_a ? d.k : d.m, p.layout.trans_a ? d.m : d.k};
  ArgumentSpec b = tensor_spec("B", p.dtype, saturating_product({d.k, d.n, d.batch}));
  b.shape = {d.batch, p.layout.trans_b ? d.n : d.k, p.layout.trans_b ? d.k : d.n};
  ArgumentSpec c = tensor_spec("C", Dtype::kF32, saturating_product({d.m, d.n, d.batch}), true);
  c.shape = {d.batch, d.m, d.n};
  return {int_spec("M", static_cast<std::int64_t>(d.m)),
          int_spec("N", static_cast<std::int64_t>(d.n)),
          int_spec("K", static_cast<std::int64_t>(d.k)),
          float_spec("alpha"),
          std::move(a),
          std::move(b),
          float_spec("beta"),
          std::move(c),
          std::move(bias)};
}

Reference GemmOperator::reference(const Problem& p, const Workload& w) const {
  return references(p, {&w}).front();
}

std::vector<Reference> GemmOperator::references(const Problem& p, const std::vector<const Workload*>& ws) const {
  const GemmDims d = dims_of(p);
  const std::size_t m = d.m, n = d.n, k = d.k;
  // Accumulation is f32 for every dtype: K products and sums, alpha, beta*C,
  // and the bias add.
  const std::size_t ops = k + 2 + (p.epilogue.bias ? 1 : 0);
  const double nu = static_cast<double>(ops) * unit_roundoff(Dtype::kF32);
  const EpilogueBound bound{p.epilogue, activation_lipschitz(p.epilogue.activation),
                            activation_eval_error(p.epilogue.activation) / static_cast<double>(ops)};
  std::vector<Reference> refs(ws.size());
  // The bound is vacuous beyond K ~ 2^23.
  const auto groups = input_groups(d, ws, nu < 0.5 ? nu / (1.0 - nu) : 1.0, refs);
  std::vector<GemmTerms> terms(ws.size());
  for (const auto& group : groups) {
    for (std::size_t member : group) {
      const Workload& w = *ws[member];
      terms[member] = {scalar_named(w, "alpha"), scalar_named(w, "beta"), w.tensors[2].f32(), w.tensors[3].f32()};
    }
  }
  std::vector<double> a(m * k), b(k * n), b_abs(k * n);
  // Tiles of C (kReferenceRows x kReferenceCols) run on every core; within a
  // tile each row segment of op(B) is reused by all the tile's rows while it
  // is in cache, and the tile's sums stay in L2. Each element still sums over
  // k in order, so the reference is the same for any tiling or thread count.
  const std::size_t row_blocks = (m + kReferenceRows - 1) / kReferenceRows;
  const std::size_t col_blocks = (n + kReferenceCols - 1) / kReferenceCols;
  const bool large = m * n * k >= (std::size_t{1} << 24);
  for (const auto& group : groups) {
    for (std::size_t batch = 0; batch < d.batch; ++batch) {
      load_operands(ws[group.front()]->tensors[0], ws[group.front()]->tensors[1], p.layout, d, batch, a, b, b_abs);
      parallel_for(row_blocks * col_blocks, [&](std::size_t tile) {
        const std::size_t i0 = (tile / col_blocks) * kReferenceRows, j0 = (tile % col_blocks) * kReferenceCols;
        const TileSpan span{i0, std::min(kReferenceRows, m - i0), j0, std::min(kReferenceCols, n - j0),
                            batch * m * n, n};
        std::vector<double> acc(span.rows * span.cols, 0.0), mag(span.rows * span.cols, 0.0);
        accumulate_tile(&a[i0 * k], k, &b[j0], &b_abs[j0], n, span.rows, span.cols, acc.data(), mag.data());
        // The tile's products serve every workload of the group, each with
        // its own alpha, beta, C and bias.
        for (std::size_t member : group) finish_tile(span, acc.data(), mag.data(), terms[member], bound, refs[member]);
      }, large ? 0 : 1);
    }
  }
  return refs;
}

}  // namespace kforge
