// The gemm operator: problem checks, cost model, reproducible workloads and the
// double-precision host reference.
#include "gemm_operator.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "float_convert.hpp"

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

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, portable, the same stream everywhere.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t state) : s_(state) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in (-1, 1), never zero: (2r + 1 - 2^24) / 2^24 for a 24-bit r, exact in f32.
  float symmetric_unit() {
    const auto r = static_cast<std::int64_t>(next() >> 40);
    return static_cast<float>(2 * r + 1 - (std::int64_t{1} << 24)) / 16777216.0f;
  }

 private:
  std::uint64_t s_;
};

/// An independent stream per tensor: the tensor index is hashed into the seed.
SplitMix64 stream(std::uint64_t seed, std::uint64_t tensor) {
  SplitMix64 mix(seed ^ (0xD1B54A32D192ED03ull * (tensor + 1)));
  return SplitMix64(mix.next());
}

void store(HostTensor& t, std::size_t i, float v) {
  switch (t.dtype) {
    case Dtype::kF32:
      std::memcpy(t.bytes.data() + 4 * i, &v, 4);
      return;
    case Dtype::kF16: {
      const std::uint16_t h = float_to_half_bits(v);
      std::memcpy(t.bytes.data() + 2 * i, &h, 2);
      return;
    }
    case Dtype::kBF16: {
      const std::uint16_t h = float_to_bf16_bits(v);
      std::memcpy(t.bytes.data() + 2 * i, &h, 2);
      return;
    }
  }
}

float load(const HostTensor& t, std::size_t i) {
  if (t.dtype == Dtype::kF32) {
    float v;
    std::memcpy(&v, t.bytes.data() + 4 * i, 4);
    return v;
  }
  std::uint16_t h;
  std::memcpy(&h, t.bytes.data() + 2 * i, 2);
  return t.dtype == Dtype::kF16 ? half_bits_to_float(h) : bf16_bits_to_float(h);
}

HostTensor random_tensor(std::string name, Dtype dtype, std::size_t elements, SplitMix64 rng) {
  HostTensor t;
  t.name = std::move(name);
  t.dtype = dtype;
  t.bytes.resize(elements * dtype_bytes(dtype));
  for (std::size_t i = 0; i < elements; ++i) store(t, i, rng.symmetric_unit());
  return t;
}

OperatorArg scalar_i32(const char* name, std::size_t v) {
  OperatorArg a;
  a.kind = OperatorArg::Kind::kInt32;
  a.name = name;
  a.i32 = static_cast<std::int32_t>(v);
  return a;
}

OperatorArg scalar_f32(const char* name, float v) {
  OperatorArg a;
  a.kind = OperatorArg::Kind::kFloat32;
  a.name = name;
  a.f32 = v;
  return a;
}

OperatorArg tensor_arg(const char* name, std::size_t index) {
  OperatorArg a;
  a.kind = OperatorArg::Kind::kTensor;
  a.name = name;
  a.tensor = index;
  return a;
}

float scalar_named(const Workload& w, std::string_view name) {
  for (const auto& a : w.args) {
    if (a.name == name && a.kind == OperatorArg::Kind::kFloat32) return a.f32;
  }
  return std::numeric_limits<float>::quiet_NaN();
}

}  // namespace

Result<Problem> GemmOperator::normalize(Problem p) const {
  if (p.op.empty()) p.op = "gemm";
  if (p.op != "gemm") return Error::bad_input("gemm: problem is for operator '" + p.op + "'");
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
  return {"trans_a", "trans_b", "dtype_bytes"};
}

void GemmOperator::add_to(Env& env, const Problem& p) const {
  for (const char* name : {"M", "N", "K"}) env[name] = p.dim(name);
  auto batch = p.dims.find("batch");
  env["batch"] = batch == p.dims.end() ? 1 : batch->second;
  env["trans_a"] = p.layout.trans_a ? 1 : 0;
  env["trans_b"] = p.layout.trans_b ? 1 : 0;
  env["dtype_bytes"] = static_cast<std::int64_t>(dtype_bytes(p.dtype));
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
  return static_cast<double>(d.batch) * ((m * k + k * n) * elem + m * n * 4.0);
}

Workload GemmOperator::make_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind) const {
  const GemmDims d = dims_of(p);
  Workload w;
  w.seed = seed;
  w.tensors.push_back(random_tensor("A", p.dtype, d.m * d.k * d.batch, stream(seed, 0)));
  w.tensors.push_back(random_tensor("B", p.dtype, d.k * d.n * d.batch, stream(seed, 1)));
  const std::size_t c_elems = d.m * d.n * d.batch;
  const bool accumulate = kind == WorkloadKind::kAccumulate;
  HostTensor c;
  if (accumulate) {
    c = random_tensor("C", Dtype::kF32, c_elems, stream(seed, 2));
  } else {
    c.name = "C";
    c.dtype = Dtype::kF32;
    c.bytes.resize(c_elems * 4);
    for (std::size_t i = 0; i < c_elems; ++i) c.f32()[i] = std::numeric_limits<float>::quiet_NaN();
  }
  c.is_output = true;
  w.tensors.push_back(std::move(c));
  w.output = 2;
  w.args = {scalar_i32("M", d.m),
            scalar_i32("N", d.n),
            scalar_i32("K", d.k),
            scalar_f32("alpha", accumulate ? 0.75f : 1.5f),
            tensor_arg("A", 0),
            tensor_arg("B", 1),
            scalar_f32("beta", accumulate ? -0.5f : 0.0f),
            tensor_arg("C", 2)};
  return w;
}

Reference GemmOperator::reference(const Problem& p, const Workload& w) const {
  const GemmDims d = dims_of(p);
  const std::size_t m = d.m, n = d.n, k = d.k;
  Reference ref;
  ref.value.assign(m * n * d.batch, std::numeric_limits<double>::quiet_NaN());
  ref.scale.assign(m * n * d.batch, 0.0);
  // Accumulation is f32 for every dtype: K products and sums, alpha, beta*C.
  const double nu = static_cast<double>(k + 2) * unit_roundoff(Dtype::kF32);
  ref.tolerance = nu < 0.5 ? nu / (1.0 - nu) : 1.0;  // the bound is vacuous beyond K ~ 2^23
  if (w.tensors.size() < 3 || w.tensors[0].elements() != m * k * d.batch ||
      w.tensors[1].elements() != k * n * d.batch || w.tensors[2].elements() != m * n * d.batch) {
    return ref;  // a workload for another problem: NaN fails every comparison
  }
  const double alpha = scalar_named(w, "alpha");
  const double beta = scalar_named(w, "beta");
  const HostTensor& ta = w.tensors[0];
  const HostTensor& tb = w.tensors[1];
  const HostTensor& tc = w.tensors[2];
  std::vector<double> a(m * k), b(k * n), b_abs(k * n), acc(n), mag(n);
  for (std::size_t batch = 0; batch < d.batch; ++batch) {
    // op(A) as M x K and op(B) as K x N, row-major, so the i-k-j loop streams.
    const std::size_t a_off = batch * m * k, b_off = batch * k * n, c_off = batch * m * n;
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t kk = 0; kk < k; ++kk) {
        a[i * k + kk] = load(ta, a_off + (p.layout.trans_a ? kk * m + i : i * k + kk));
      }
    }
    for (std::size_t kk = 0; kk < k; ++kk) {
      for (std::size_t j = 0; j < n; ++j) {
        const double v = load(tb, b_off + (p.layout.trans_b ? j * k + kk : kk * n + j));
        b[kk * n + j] = v;
        b_abs[kk * n + j] = std::fabs(v);
      }
    }
    for (std::size_t i = 0; i < m; ++i) {
      std::fill(acc.begin(), acc.end(), 0.0);
      std::fill(mag.begin(), mag.end(), 0.0);
      for (std::size_t kk = 0; kk < k; ++kk) {
        const double aik = a[i * k + kk];
        const double aik_abs = std::fabs(aik);
        const double* brow = &b[kk * n];
        const double* brow_abs = &b_abs[kk * n];
        for (std::size_t j = 0; j < n; ++j) {
          acc[j] += aik * brow[j];
          mag[j] += aik_abs * brow_abs[j];
        }
      }
      for (std::size_t j = 0; j < n; ++j) {
        const std::size_t idx = c_off + i * n + j;
        double value = alpha * acc[j];
        double scale = std::fabs(alpha) * mag[j];
        if (beta != 0.0) {  // BLAS convention: C is not read when beta == 0
          const double c = tc.f32()[idx];
          value += beta * c;
          scale += std::fabs(beta) * std::fabs(c);
        }
        ref.value[idx] = value;
        ref.scale[idx] = scale;
      }
    }
  }
  return ref;
}

}  // namespace kforge
