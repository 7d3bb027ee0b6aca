// The attention operator: problem checks, cost model, reproducible workloads
// (plain and peaked), and the double-precision reference with an f32 host
// baseline that sets the tolerance.
#include "generator/attention_operator.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/parallel_for.hpp"
#include "generator/workload_builder.hpp"

namespace kforge {

namespace {

struct Dims {
  std::size_t b, h, s, sk, d;
  bool causal;
};

Dims dims_of(const Problem& p) {
  auto get = [&](const char* n, std::int64_t fallback) {
    auto it = p.dims.find(n);
    const std::int64_t v = it == p.dims.end() ? fallback : it->second;
    return static_cast<std::size_t>(v > 0 ? v : 0);
  };
  const std::size_t s = get("S", 0);
  return {get("B", 0), get("H", 0), s, get("SK", static_cast<std::int64_t>(s)), get("D", 0),
          p.attr("mask") == "causal"};
}

/// Keys [0, end) are visible to query i: all of them, or under the causal
/// mask those with j <= i + (SK - S).
std::size_t visible_end(const Dims& d, std::size_t i) {
  if (!d.causal) return d.sk;
  return std::min(d.sk, i + (d.sk - d.s) + 1);
}

typedef double Double4 __attribute__((vector_size(32)));
typedef float Float4 __attribute__((vector_size(16)));
typedef float Float8 __attribute__((vector_size(32)));

/// The dots of one query row `q` (d floats) with keys [0, end), in double
/// (`s`) and in float (`s32`), each a sum over c in order, exactly as one
/// key at a time would give them. Eight keys at a time from K transposed
/// (`kt[c * ld + j]`): a single dot is a chain of dependent adds, eight run
/// side by side. Built for AVX2 as well where the compiler can (chosen at
/// run time); AVX2 alone has no FMA, so nothing is fused.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
__attribute__((target_clones("avx2", "default")))
#endif
void query_dots(const float* q, const float* kt, std::size_t ld, std::size_t d, std::size_t end, double* s,
                float* s32) {
  std::size_t j = 0;
  for (; j + 8 <= end; j += 8) {
    Double4 lo = {0, 0, 0, 0}, hi = lo;
    Float8 f = {0, 0, 0, 0, 0, 0, 0, 0};
    for (std::size_t c = 0; c < d; ++c) {
      Float4 k0, k1;
      std::memcpy(&k0, kt + c * ld + j, sizeof k0);
      std::memcpy(&k1, kt + c * ld + j + 4, sizeof k1);
      const double qd = q[c];
      lo += qd * __builtin_convertvector(k0, Double4);
      hi += qd * __builtin_convertvector(k1, Double4);
      Float8 k8;
      std::memcpy(&k8, kt + c * ld + j, sizeof k8);
      f += q[c] * k8;
    }
    for (std::size_t t = 0; t < 4; ++t) {
      s[j + t] = lo[t];
      s[j + 4 + t] = hi[t];
    }
    for (std::size_t t = 0; t < 8; ++t) s32[j + t] = f[t];
  }
  for (; j < end; ++j) {
    double dot = 0.0;
    float dot32 = 0.0f;
    for (std::size_t c = 0; c < d; ++c) {
      dot += static_cast<double>(q[c]) * kt[c * ld + j];
      dot32 += q[c] * kt[c * ld + j];
    }
    s[j] = dot;
    s32[j] = dot32;
  }
}

double visible_pairs(const Dims& d) {
  double pairs = 0;
  if (!d.causal) return static_cast<double>(d.s) * static_cast<double>(d.sk);
  for (std::size_t i = 0; i < d.s; ++i) pairs += static_cast<double>(visible_end(d, i));
  return pairs;
}

}  // namespace

std::vector<AttributeSpec> AttentionOperator::attributes() const {
  return {{"mask", {"none", "causal"}, "causal: query i sees keys j <= i + (SK - S)"}};
}

Result<Problem> AttentionOperator::normalize(Problem p) const {
  if (p.op.empty()) p.op = "attention";
  if (p.op != "attention") return Error::bad_input("attention: problem is for operator '" + p.op + "'");
  KF_TRY(normalize_attributes(*this, p));
  if (p.layout.trans_a || p.layout.trans_b) {
    return Error::bad_input("attention: layout " + p.layout.name() +
                            " is not supported (Q, K, V are row-major B x H x seq x D: NN)");
  }
  for (const auto& [name, value] : p.dims) {
    if (name != "B" && name != "H" && name != "S" && name != "SK" && name != "D") {
      return Error::bad_input("attention: unknown dimension '" + name + "' (attention reads B, H, S, SK, D)");
    }
  }
  if (auto s = p.dims.find("S"); s != p.dims.end()) p.dims.emplace("SK", s->second);
  for (const char* name : {"B", "H", "S", "SK", "D"}) {
    auto it = p.dims.find(name);
    if (it == p.dims.end()) return Error::bad_input(std::string("attention: dimension ") + name + " is missing");
    if (it->second <= 0) {
      return Error::bad_input(std::string("attention: dimension ") + name + " must be positive, got " +
                              std::to_string(it->second));
    }
    if (it->second > std::numeric_limits<std::int32_t>::max()) {
      return Error::bad_input(std::string("attention: dimension ") + name + " = " + std::to_string(it->second) +
                              " does not fit a 32-bit kernel argument");
    }
  }
  const std::int64_t bh_max = std::numeric_limits<std::int32_t>::max();
  std::int64_t bh = 0;
  if (__builtin_mul_overflow(p.dims["B"], p.dims["H"], &bh) || bh > bh_max) {
    return Error::bad_input("attention: B * H = " + std::to_string(p.dims["B"]) + " * " +
                            std::to_string(p.dims["H"]) + " does not fit a 32-bit grid dimension");
  }
  for (const char* seq : {"S", "SK"}) {
    std::int64_t bytes = 0;
    if (__builtin_mul_overflow(bh, p.dims[seq], &bytes) || __builtin_mul_overflow(bytes, p.dims["D"], &bytes) ||
        __builtin_mul_overflow(bytes, std::int64_t{4}, &bytes)) {
      return Error::bad_input("attention: problem " + p.dims_string() + " is too large to address");
    }
  }
  if (p.attrs["mask"] == "causal" && p.dims["SK"] < p.dims["S"]) {
    return Error::bad_input("attention: mask=causal needs SK >= S (got S=" + std::to_string(p.dims["S"]) +
                            ", SK=" + std::to_string(p.dims["SK"]) + "): the first queries would see no key");
  }
  return p;
}

void AttentionOperator::add_to(Env& env, const Problem& p) const {
  const Dims d = dims_of(p);
  for (const char* name : {"B", "H", "S", "D"}) env[name] = p.dim(name);
  env["SK"] = static_cast<std::int64_t>(d.sk);
  env["dtype_bytes"] = static_cast<std::int64_t>(dtype_bytes(p.dtype));
  add_attributes_to(env, *this, p);
}

double AttentionOperator::flops(const Problem& p) const {
  const Dims d = dims_of(p);
  return 4.0 * static_cast<double>(d.b) * static_cast<double>(d.h) * static_cast<double>(d.d) * visible_pairs(d);
}

double AttentionOperator::bytes(const Problem& p) const {
  const Dims d = dims_of(p);
  const double elem = static_cast<double>(dtype_bytes(p.dtype));
  const double bhd = static_cast<double>(d.b) * static_cast<double>(d.h) * static_cast<double>(d.d);
  return bhd * (static_cast<double>(d.s) * (elem + 4.0) + 2.0 * static_cast<double>(d.sk) * elem);
}

Workload AttentionOperator::make_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind) const {
  const Dims d = dims_of(p);
  const std::size_t bh = d.b * d.h;
  Workload w;
  w.seed = seed;
  w.tensors.push_back(random_tensor("Q", p.dtype, bh * d.s * d.d, tensor_stream(seed, 0)));
  w.tensors.push_back(random_tensor("K", p.dtype, bh * d.sk * d.d, tensor_stream(seed, 1)));
  w.tensors.push_back(random_tensor("V", p.dtype, bh * d.sk * d.d, tensor_stream(seed, 2)));
  if (kind == WorkloadKind::kAccumulate) {
    // Peaked: Q and K times 4 (exact in every dtype), scores up to 16 sqrt(D).
    for (std::size_t t = 0; t < 2; ++t) {
      HostTensor& x = w.tensors[t];
      for (std::size_t i = 0; i < x.elements(); ++i) store_element(x, i, 4.0f * load_element(x, i));
    }
  }
  HostTensor o = filled_tensor("O", Dtype::kF32, bh * d.s * d.d, std::numeric_limits<float>::quiet_NaN());
  o.is_output = true;
  w.tensors.push_back(std::move(o));
  w.output = 3;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(std::max<std::size_t>(d.d, 1))));
  w.args = {scalar_i32("B", static_cast<std::int64_t>(d.b)),
            scalar_i32("H", static_cast<std::int64_t>(d.h)),
            scalar_i32("S", static_cast<std::int64_t>(d.s)),
            scalar_i32("SK", static_cast<std::int64_t>(d.sk)),
            scalar_i32("D", static_cast<std::int64_t>(d.d)),
            scalar_f32("scale", scale),
            tensor_arg("Q", 0),
            tensor_arg("K", 1),
            tensor_arg("V", 2),
            tensor_arg("O", 3)};
  return w;
}

std::vector<ArgumentSpec> AttentionOperator::arguments(const Problem& p) const {
  const Dims d = dims_of(p);
  const std::uint64_t q = saturating_product({d.b, d.h, d.s, d.d}),
                      kv = saturating_product({d.b, d.h, d.sk, d.d});
  return {int_spec("B", static_cast<std::int64_t>(d.b)),
          int_spec("H", static_cast<std::int64_t>(d.h)),
          int_spec("S", static_cast<std::int64_t>(d.s)),
          int_spec("SK", static_cast<std::int64_t>(d.sk)),
          int_spec("D", static_cast<std::int64_t>(d.d)),
          float_spec("scale"),
          tensor_spec("Q", p.dtype, q),
          tensor_spec("K", p.dtype, kv),
          tensor_spec("V", p.dtype, kv),
          tensor_spec("O", Dtype::kF32, q, true)};
}

Reference AttentionOperator::reference(const Problem& p, const Workload& w) const {
  const Dims d = dims_of(p);
  const std::size_t bh = d.b * d.h;
  const std::size_t n = bh * d.s * d.d;
  Reference ref;
  ref.value.assign(n, std::numeric_limits<double>::quiet_NaN());
  ref.scale.assign(n, 0.0);
  ref.tolerance = kFloor;
  const std::size_t iq = tensor_named(w, "Q"), ik = tensor_named(w, "K"), iv = tensor_named(w, "V");
  if (iq == w.tensors.size() || ik == w.tensors.size() || iv == w.tensors.size() ||
      w.tensors[iq].elements() != n || w.tensors[ik].elements() != bh * d.sk * d.d ||
      w.tensors[iv].elements() != bh * d.sk * d.d) {
    return ref;  // a workload for another problem: NaN fails every comparison
  }
  const float scale_f = scalar_named(w, "scale");
  const double scale = scale_f;
  const auto& tq = w.tensors[iq];
  const auto& tk = w.tensors[ik];
  const auto& tv = w.tensors[iv];
  // Blocks of query rows of one head are independent and run on every core;
  // each row is computed as it would be alone, and the largest baseline
  // error is a maximum, so the reference is the same for any thread count.
  constexpr std::size_t kRowsPerTask = 64;
  const std::size_t row_blocks = (d.s + kRowsPerTask - 1) / kRowsPerTask;
  std::vector<double> worst_of(bh * row_blocks, 0.0);  // the baseline's largest |error| / scale
  const bool large = bh * d.s * d.sk * d.d >= (std::size_t{1} << 22);
  parallel_for(bh * row_blocks, [&](std::size_t task) {
    const std::size_t head = task / row_blocks;
    const std::size_t i0 = (task % row_blocks) * kRowsPerTask, i1 = std::min(d.s, i0 + kRowsPerTask);
    std::vector<float> q(d.d), kt(d.d * d.sk), v(d.sk * d.d);
    std::vector<double> s(d.sk), p_ref(d.sk), acc(d.d), mag(d.d);
    std::vector<float> s32(d.sk), acc32(d.d);
    double worst = 0.0;
    for (std::size_t j = 0; j < d.sk; ++j) {
      for (std::size_t c = 0; c < d.d; ++c) {
        kt[c * d.sk + j] = load_element(tk, (head * d.sk + j) * d.d + c);
        v[j * d.d + c] = load_element(tv, (head * d.sk + j) * d.d + c);
      }
    }
    for (std::size_t i = i0; i < i1; ++i) {
      const std::size_t row = (head * d.s + i) * d.d;
      for (std::size_t c = 0; c < d.d; ++c) q[c] = load_element(tq, row + c);
      const std::size_t end = visible_end(d, i);
      // The dots, in double for the answer and in float for the baseline.
      query_dots(q.data(), kt.data(), d.sk, d.d, end, s.data(), s32.data());
      // The double-precision answer.
      double m = -std::numeric_limits<double>::infinity();
      for (std::size_t j = 0; j < end; ++j) {
        s[j] = scale * s[j];
        m = std::max(m, s[j]);
      }
      double l = 0.0;
      std::fill(acc.begin(), acc.end(), 0.0);
      std::fill(mag.begin(), mag.end(), 0.0);
      for (std::size_t j = 0; j < end; ++j) {
        p_ref[j] = std::exp(s[j] - m);
        l += p_ref[j];
        for (std::size_t c = 0; c < d.d; ++c) {
          acc[c] += p_ref[j] * v[j * d.d + c];
          mag[c] += p_ref[j] * std::fabs(v[j * d.d + c]);
        }
      }
      // The trusted f32 baseline: the same three steps, sequential, in float.
      float m32 = -std::numeric_limits<float>::infinity();
      for (std::size_t j = 0; j < end; ++j) {
        s32[j] = s32[j] * scale_f;
        m32 = std::max(m32, s32[j]);
      }
      float l32 = 0.0f;
      std::fill(acc32.begin(), acc32.end(), 0.0f);
      for (std::size_t j = 0; j < end; ++j) {
        const float pj = std::exp(s32[j] - m32);
        l32 += pj;
        for (std::size_t c = 0; c < d.d; ++c) acc32[c] += pj * v[j * d.d + c];
      }
      for (std::size_t c = 0; c < d.d; ++c) {
        const double value = acc[c] / l;
        const double sc = mag[c] / l;
        ref.value[row + c] = value;
        ref.scale[row + c] = sc;
        const double err = std::fabs(static_cast<double>(acc32[c] / l32) - value);
        if (sc > 0 && std::isfinite(err)) worst = std::max(worst, err / sc);
      }
    }
    worst_of[task] = worst;
  }, large ? 0 : 1);
  double worst = 0.0;
  for (double w_task : worst_of) worst = std::max(worst, w_task);
  ref.tolerance = std::max(kMargin * worst, kFloor);
  return ref;
}

}  // namespace kforge
