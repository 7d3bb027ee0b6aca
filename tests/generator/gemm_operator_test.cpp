// The gemm operator: problem checks, cost model, reference, workloads, conversions.
#include "generator/gemm_operator.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "core/float_convert.hpp"
#include "generator/softmax_operator.hpp"
#include "generator/workload_builder.hpp"

using kforge::Dtype;
using kforge::GemmOperator;
using kforge::Layout;
using kforge::Problem;
using kforge::Workload;
using kforge::WorkloadKind;

namespace {

const GemmOperator kGemm;

Problem problem(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch = 1) {
  Problem p;
  p.op = "gemm";
  p.dims = {{"M", m}, {"N", n}, {"K", k}, {"batch", batch}};
  return p;
}

std::string normalize_error(Problem p) {
  auto r = kGemm.normalize(std::move(p));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == kforge::ErrorCode::kBadInput);
  return r.error().message;
}

void set_f32(Workload& w, std::size_t tensor, const std::vector<float>& values) {
  auto& t = w.tensors[tensor];
  REQUIRE(t.elements() == values.size());
  std::memcpy(t.bytes.data(), values.data(), values.size() * sizeof(float));
}

void set_scalar(Workload& w, const char* name, float v) {
  for (auto& a : w.args) {
    if (a.name == name) a.f32 = v;
  }
}

// op(A) = [[1, 2, 3], [4, 5, 6]] (2 x 3), op(B) = [[1, 2], [3, 4], [5, 6]] (3 x 2):
// op(A) op(B) = [[22, 28], [49, 64]]. Stored per layout (row-major):
std::vector<float> stored_a(bool trans) {
  return trans ? std::vector<float>{1, 4, 2, 5, 3, 6} : std::vector<float>{1, 2, 3, 4, 5, 6};
}
std::vector<float> stored_b(bool trans) {
  return trans ? std::vector<float>{1, 3, 5, 2, 4, 6} : std::vector<float>{1, 2, 3, 4, 5, 6};
}

}  // namespace

TEST_CASE("gemm: normalize fills batch and checks dims", "[gemm]") {
  Problem p;
  p.dims = {{"M", 4}, {"N", 5}, {"K", 6}};
  auto n = kGemm.normalize(p);
  REQUIRE(n.ok());
  CHECK(n->op == "gemm");
  CHECK(n->dim("batch") == 1);
  CHECK(n->key() == "gemm/K=6,M=4,N=5,batch=1/f32/NN");

  p = problem(4, 5, 6);
  p.dims.erase("K");
  CHECK(normalize_error(p) == "gemm: dimension K is missing");
  p = problem(4, 0, 6);
  CHECK(normalize_error(p) == "gemm: dimension N must be positive, got 0");
  p = problem(4, 5, 6, -1);
  CHECK(normalize_error(p) == "gemm: dimension batch must be positive, got -1");
  p = problem(4, 5, 6);
  p.dims["Q"] = 3;
  CHECK(normalize_error(p) == "gemm: unknown dimension 'Q' (gemm reads M, N, K, batch)");
  p = problem(4, 5, 6);
  p.op = "conv";
  CHECK(normalize_error(p) == "gemm: problem is for operator 'conv'");
  p = problem(std::int64_t{1} << 31, 5, 6);
  CHECK_THAT(normalize_error(p), Catch::StartsWith("gemm: dimension M = 2147483648 does not fit"));
  p = problem(1 << 30, 1 << 30, 6, 1 << 20);
  CHECK_THAT(normalize_error(p), Catch::EndsWith("is too large to address"));
  for (Dtype d : {Dtype::kF32, Dtype::kF16, Dtype::kBF16}) {
    p = problem(4, 5, 6);
    p.dtype = d;
    CHECK(kGemm.normalize(p).ok());
  }
}

TEST_CASE("gemm: names, flops and bytes", "[gemm]") {
  Problem p = problem(2, 3, 4, 5);
  p.layout = Layout{false, true};
  p.dtype = Dtype::kF16;
  kforge::Env env;
  kGemm.add_to(env, p);
  CHECK(env == kforge::Env{{"M", 2},
                           {"N", 3},
                           {"K", 4},
                           {"batch", 5},
                           {"trans_a", 0},
                           {"trans_b", 1},
                           {"dtype_bytes", 2},
                           {"bias", 0},
                           {"activation", 0}});
  CHECK(kGemm.extra_names() ==
        std::vector<std::string>{"trans_a", "trans_b", "dtype_bytes", "bias", "activation"});
  p.epilogue = *kforge::parse_epilogue("bias+silu");
  kGemm.add_to(env, p);
  CHECK(env["bias"] == 1);
  CHECK(env["activation"] == 3);
  CHECK(kGemm.bytes(p) == 5.0 * ((8 + 12) * 2 + 6 * 4) + 3 * 4);  // plus the bias, once
  p.epilogue = {};
  CHECK(kGemm.flops(p) == 240.0);                         // 2 * 2*3*4 * 5
  CHECK(kGemm.bytes(p) == 5.0 * ((8 + 12) * 2 + 6 * 4));  // 320
  p.dtype = Dtype::kF32;
  CHECK(kGemm.bytes(p) == 5.0 * ((8 + 12) * 4 + 6 * 4));  // 520
  Problem big = problem(4096, 4096, 4096);
  CHECK(kGemm.flops(big) == 2.0 * 4096.0 * 4096.0 * 4096.0);
}

TEST_CASE("gemm: reference on a hand-computed case, all four layouts", "[gemm]") {
  for (const char* name : {"NN", "NT", "TN", "TT"}) {
    INFO(name);
    Problem p = problem(2, 2, 3);
    p.layout = *kforge::parse_layout(name);
    Workload w = kGemm.make_workload(p, 1, WorkloadKind::kPoisonedOutput);
    set_f32(w, 0, stored_a(p.layout.trans_a));
    set_f32(w, 1, stored_b(p.layout.trans_b));
    set_scalar(w, "alpha", 2.0f);
    auto ref = kGemm.reference(p, w);
    CHECK(ref.value == std::vector<double>{44, 56, 98, 128});
    CHECK(ref.scale == std::vector<double>{44, 56, 98, 128});

    w = kGemm.make_workload(p, 1, WorkloadKind::kAccumulate);
    set_f32(w, 0, stored_a(p.layout.trans_a));
    set_f32(w, 1, stored_b(p.layout.trans_b));
    set_f32(w, 2, {2, 4, 6, -8});
    set_scalar(w, "alpha", -1.0f);
    set_scalar(w, "beta", -0.5f);
    ref = kGemm.reference(p, w);
    CHECK(ref.value == std::vector<double>{-23, -30, -52, -60});
    CHECK(ref.scale == std::vector<double>{23, 30, 52, 68});
  }
}

TEST_CASE("gemm: reference tolerance is gamma(K + 2) in f32", "[gemm]") {
  Problem p = problem(1, 1, 1000);
  for (Dtype d : {Dtype::kF32, Dtype::kF16, Dtype::kBF16}) {
    p.dtype = d;
    Workload w = kGemm.make_workload(p, 3, WorkloadKind::kPoisonedOutput);
    const double u = std::ldexp(1.0, -24);
    CHECK(kGemm.reference(p, w).tolerance == Approx(1002 * u / (1 - 1002 * u)).epsilon(1e-12));
  }
}

TEST_CASE("gemm: epilogue bias and activations on a hand-computed case", "[gemm]") {
  // op(A) op(B) = [[22, 28], [49, 64]]; alpha = -1, beta = 0, bias = [30, -60]:
  // pre = [[8, -88], [-19, -124]].
  Problem p = problem(2, 2, 3);
  const std::vector<double> pre{8, -88, -19, -124};
  const std::vector<double> mag{52, 88, 79, 124};  // |alpha| sum |a||b| + |bias|
  for (const char* name : {"bias", "bias+relu", "bias+gelu", "bias+silu"}) {
    INFO(name);
    p.epilogue = *kforge::parse_epilogue(name);
    Workload w = kGemm.make_workload(p, 1, WorkloadKind::kPoisonedOutput);
    set_f32(w, 0, stored_a(false));
    set_f32(w, 1, stored_b(false));
    set_f32(w, 3, {30, -60});
    set_scalar(w, "alpha", -1.0f);
    auto ref = kGemm.reference(p, w);
    const double u = std::ldexp(1.0, -24);
    CHECK(ref.tolerance == Approx(6 * u / (1 - 6 * u)).epsilon(1e-12));  // K + 2 + the bias add
    for (std::size_t i = 0; i < 4; ++i) {
      const double x = pre[i];
      switch (p.epilogue.activation) {
        case kforge::Activation::kNone:
          CHECK(ref.value[i] == x);
          CHECK(ref.scale[i] == mag[i]);
          break;
        case kforge::Activation::kRelu:
          CHECK(ref.value[i] == (x > 0 ? x : 0.0));
          CHECK(ref.scale[i] == mag[i]);
          break;
        case kforge::Activation::kGelu:
          CHECK(ref.value[i] == Approx(0.5 * x * std::erfc(-x / std::sqrt(2.0))).epsilon(1e-12).margin(1e-30));
          CHECK(ref.scale[i] == Approx(1.13 * mag[i] + 20.0 / 6 * std::fabs(x)));
          break;
        case kforge::Activation::kSilu:
          CHECK(ref.value[i] == Approx(x / (1 + std::exp(-x))).epsilon(1e-12));
          CHECK(ref.scale[i] == Approx(1.10 * mag[i] + 10.0 / 6 * std::fabs(x)));
          break;
      }
    }
  }
  // The activation alone, no bias: relu of [[-22, -28], [-49, -64]] is zero.
  p.epilogue = *kforge::parse_epilogue("relu");
  Workload w = kGemm.make_workload(p, 1, WorkloadKind::kPoisonedOutput);
  set_f32(w, 0, stored_a(false));
  set_f32(w, 1, stored_b(false));
  set_scalar(w, "alpha", -1.0f);
  CHECK(kGemm.reference(p, w).value == std::vector<double>{0, 0, 0, 0});
}

TEST_CASE("gemm: epilogue in the problem key, attributes refused", "[gemm]") {
  Problem p = problem(4, 5, 6);
  CHECK(kGemm.normalize(p)->key() == "gemm/K=6,M=4,N=5,batch=1/f32/NN");
  p.epilogue = *kforge::parse_epilogue("gelu+bias");
  CHECK(kGemm.normalize(p)->key() == "gemm/K=6,M=4,N=5,batch=1/f32/NN/bias+gelu");
  p.attrs["kind"] = "max";
  CHECK(normalize_error(p) == "gemm: unknown attribute 'kind' (gemm has none)");
}

TEST_CASE("gemm: batches are contiguous", "[gemm]") {
  Problem p = problem(2, 2, 3, 2);
  p.layout = Layout{true, true};
  Workload w = kGemm.make_workload(p, 1, WorkloadKind::kPoisonedOutput);
  std::vector<float> a = stored_a(true), b = stored_b(true);
  for (float v : stored_a(true)) a.push_back(v * 10);  // batch 1: A scaled by 10
  for (float v : stored_b(true)) b.push_back(-v);      // and B negated
  set_f32(w, 0, a);
  set_f32(w, 1, b);
  set_scalar(w, "alpha", 1.0f);
  auto ref = kGemm.reference(p, w);
  CHECK(ref.value == std::vector<double>{22, 28, 49, 64, -220, -280, -490, -640});
}

TEST_CASE("gemm: beta == 0 never reads the poisoned output", "[gemm]") {
  Problem p = problem(7, 5, 9, 2);
  Workload w = kGemm.make_workload(p, 11, WorkloadKind::kPoisonedOutput);
  const auto& c = w.tensors[w.output];
  for (std::size_t i = 0; i < c.elements(); ++i) REQUIRE(std::isnan(c.f32()[i]));
  auto ref = kGemm.reference(p, w);
  REQUIRE(ref.value.size() == 7 * 5 * 2);
  for (std::size_t i = 0; i < ref.value.size(); ++i) {
    REQUIRE(std::isfinite(ref.value[i]));
    REQUIRE(std::isfinite(ref.scale[i]));
  }
}

TEST_CASE("gemm: workloads are deterministic and follow the contract", "[gemm]") {
  Problem p = problem(5, 6, 7, 2);
  p.layout = Layout{true, false};
  Workload a = kGemm.make_workload(p, 42, WorkloadKind::kAccumulate);
  Workload b = kGemm.make_workload(p, 42, WorkloadKind::kAccumulate);
  Workload other = kGemm.make_workload(p, 43, WorkloadKind::kAccumulate);
  REQUIRE(a.tensors.size() == 4);
  for (std::size_t t = 0; t < 3; ++t) {
    CHECK(a.tensors[t].bytes == b.tensors[t].bytes);
    CHECK(a.tensors[t].bytes != other.tensors[t].bytes);
  }
  CHECK(a.tensors[0].bytes != a.tensors[1].bytes);  // independent streams per tensor
  CHECK(a.seed == 42);
  CHECK(a.output == 2);
  CHECK(a.tensors[0].name == "A");
  CHECK(a.tensors[0].elements() == 5 * 7 * 2);
  CHECK(a.tensors[1].elements() == 7 * 6 * 2);
  CHECK(a.tensors[2].elements() == 5 * 6 * 2);
  CHECK(a.tensors[2].is_output);
  CHECK_FALSE(a.tensors[0].is_output);
  for (std::size_t t = 0; t < 3; ++t) {
    for (std::size_t i = 0; i < a.tensors[t].elements(); ++i) {
      const float v = a.tensors[t].f32()[i];
      REQUIRE(v > -1.0f);
      REQUIRE(v < 1.0f);
      REQUIRE(v != 0.0f);
    }
  }
  // Golden values (SplitMix64, computed independently): the generator is part of
  // reproducibility across standard libraries and machines.
  CHECK(a.tensors[0].f32()[0] == -0x1.098366p-1f);
  CHECK(a.tensors[0].f32()[1] == -0x1.fd9adep-1f);
  CHECK(a.tensors[0].f32()[2] == 0x1.696ca2p-1f);

  using Kind = kforge::OperatorArg::Kind;
  REQUIRE(a.args.size() == 9);
  const std::vector<std::string> names{"M", "N", "K", "alpha", "A", "B", "beta", "C", "bias"};
  const std::vector<Kind> kinds{Kind::kInt32,  Kind::kInt32,  Kind::kInt32,   Kind::kFloat32, Kind::kTensor,
                                Kind::kTensor, Kind::kFloat32, Kind::kTensor, Kind::kTensor};
  for (std::size_t i = 0; i < 9; ++i) {
    CHECK(a.args[i].name == names[i]);
    CHECK(a.args[i].kind == kinds[i]);
  }
  CHECK(a.args[0].i32 == 5);
  CHECK(a.args[1].i32 == 6);
  CHECK(a.args[2].i32 == 7);
  CHECK(a.args[3].f32 == 0.75f);
  CHECK(a.args[6].f32 == -0.5f);
  CHECK(a.args[4].tensor == 0);
  CHECK(a.args[5].tensor == 1);
  CHECK(a.args[7].tensor == 2);
  CHECK(a.args[8].tensor == 3);
  // Without a bias in the epilogue the bias tensor is NaN: reading it shows.
  REQUIRE(a.tensors[3].elements() == 6);
  CHECK(std::isnan(a.tensors[3].f32()[0]));
  Workload poisoned = kGemm.make_workload(p, 42, WorkloadKind::kPoisonedOutput);
  CHECK(poisoned.args[3].f32 == 1.5f);
  CHECK(poisoned.args[6].f32 == 0.0f);
  CHECK(poisoned.tensors[0].bytes == a.tensors[0].bytes);
}

TEST_CASE("gemm: f16 and bf16 inputs are stored rounded, reference reads them", "[gemm]") {
  for (Dtype d : {Dtype::kF16, Dtype::kBF16}) {
    Problem p = problem(3, 4, 5);
    p.dtype = d;
    Workload w = kGemm.make_workload(p, 9, WorkloadKind::kAccumulate);
    Workload w32 = kGemm.make_workload(problem(3, 4, 5), 9, WorkloadKind::kAccumulate);
    REQUIRE(w.tensors[0].dtype == d);
    REQUIRE(w.tensors[0].bytes.size() == 3 * 5 * 2);
    CHECK(w.tensors[2].dtype == Dtype::kF32);
    // Element 0 is the f32 value rounded to the dtype.
    std::uint16_t bits;
    std::memcpy(&bits, w.tensors[0].bytes.data(), 2);
    const float f32 = w32.tensors[0].f32()[0];
    CHECK(bits == (d == Dtype::kF16 ? kforge::float_to_half_bits(f32) : kforge::float_to_bf16_bits(f32)));
    auto ref = kGemm.reference(p, w);
    for (double v : ref.value) CHECK(std::isfinite(v));
  }
}

TEST_CASE("float conversions round to nearest even", "[gemm]") {
  using kforge::float_to_half_bits;
  using kforge::half_bits_to_float;
  CHECK(float_to_half_bits(1.0f) == 0x3c00);
  CHECK(float_to_half_bits(-2.0f) == 0xc000);
  CHECK(float_to_half_bits(65504.0f) == 0x7bff);
  CHECK(float_to_half_bits(65520.0f) == 0x7c00);                          // rounds up to infinity
  CHECK(float_to_half_bits(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);      // tie: even
  CHECK(float_to_half_bits(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);  // tie: even
  CHECK(float_to_half_bits(std::ldexp(1.0f, -24)) == 0x0001);
  CHECK(float_to_half_bits(std::ldexp(1.0f, -25)) == 0x0000);  // tie: even
  CHECK(float_to_half_bits(std::ldexp(1.5f, -25)) == 0x0001);
  CHECK(float_to_half_bits(std::ldexp(1.0f, -14)) == 0x0400);  // smallest normal
  CHECK(float_to_half_bits(std::nanf("")) == 0x7e00);
  CHECK(std::isinf(half_bits_to_float(0x7c00)));
  CHECK(half_bits_to_float(0x0001) == std::ldexp(1.0f, -24));
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    const float f = half_bits_to_float(bits);
    if (std::isnan(f)) continue;
    REQUIRE(float_to_half_bits(f) == bits);
  }
  using kforge::bf16_bits_to_float;
  using kforge::float_to_bf16_bits;
  CHECK(float_to_bf16_bits(1.0f) == 0x3f80);
  CHECK(float_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);      // tie: even
  CHECK(float_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3f82);  // tie: even
  CHECK(float_to_bf16_bits(1.0f + 5 * std::ldexp(1.0f, -10)) == 0x3f81);
  CHECK(bf16_bits_to_float(0x3f81) == 1.0078125f);
  CHECK(std::isnan(bf16_bits_to_float(float_to_bf16_bits(std::nanf("")))));
}

TEST_CASE("gemm: the tiled, multi-threaded reference equals the plain sum element by element", "[gemm]") {
  // Large enough (M*N*K >= 2^24) to run on every core, with M odd and not a
  // multiple of the row block, N not a multiple of the 8-column micro-tile,
  // K over two blocks and a part, and both operands transposed; beta != 0 reads C.
  const std::size_t m = 263, n = 257, k = 520;
  Problem p = problem(m, n, k);
  p.layout = Layout{true, true};
  Workload w = kGemm.make_workload(p, 5, WorkloadKind::kAccumulate);
  const auto ref = kGemm.reference(p, w);
  REQUIRE(ref.value.size() == m * n);
  const double alpha = kforge::scalar_named(w, "alpha");
  const double beta = kforge::scalar_named(w, "beta");
  REQUIRE(beta != 0.0);
  const float* a = w.tensors[0].f32();  // K x M (transposed)
  const float* b = w.tensors[1].f32();  // N x K (transposed)
  const float* c = w.tensors[2].f32();
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double acc = 0.0, mag = 0.0;
      for (std::size_t kk = 0; kk < k; ++kk) {
        const double x = a[kk * m + i], y = b[j * k + kk];
        acc += x * y;
        mag += std::fabs(x) * std::fabs(y);
      }
      const double value = alpha * acc + beta * c[i * n + j];
      const double scale = std::fabs(alpha) * mag + std::fabs(beta) * std::fabs(c[i * n + j]);
      if (ref.value[i * n + j] != value || ref.scale[i * n + j] != scale) ++mismatches;
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("gemm: a tuning run's two workloads share A and B, and their references one pass", "[gemm]") {
  // Both validation runs of a tuning run draw from the same seed: they
  // differ in C, alpha and beta only.
  CHECK(kGemm.workload_seed(41, WorkloadKind::kPoisonedOutput) == kGemm.workload_seed(41, WorkloadKind::kAccumulate));
  // Large enough to run on every core; both transposed, a batch of 2, and an
  // epilogue reading the bias.
  Problem p = problem(67, 45, 300, 2);
  p.layout = Layout{true, true};
  p.epilogue = *kforge::parse_epilogue("bias+gelu");
  const Workload poisoned = kGemm.make_workload(p, 9, WorkloadKind::kPoisonedOutput);
  const Workload accumulate = kGemm.make_workload(p, 9, WorkloadKind::kAccumulate);
  const Workload other = kGemm.make_workload(p, 10, WorkloadKind::kAccumulate);  // other inputs
  REQUIRE(poisoned.tensors[0].bytes == accumulate.tensors[0].bytes);
  REQUIRE(poisoned.tensors[1].bytes == accumulate.tensors[1].bytes);
  REQUIRE(poisoned.tensors[0].bytes != other.tensors[0].bytes);
  const auto together = kGemm.references(p, {&poisoned, &accumulate, &other});
  REQUIRE(together.size() == 3);
  const Workload* ws[] = {&poisoned, &accumulate, &other};
  for (std::size_t i = 0; i < 3; ++i) {
    INFO("workload " << i);
    const auto alone = kGemm.reference(p, *ws[i]);
    CHECK(together[i].tolerance == alone.tolerance);
    CHECK(together[i].scale == alone.scale);  // the same bits
    std::size_t differ = 0;
    for (std::size_t e = 0; e < alone.value.size(); ++e) differ += together[i].value[e] != alone.value[e];
    CHECK(differ == 0);
  }
  // The accumulate run reads C; the poisoned one must not.
  CHECK(together[0].value != together[1].value);
}

TEST_CASE("operators draw each validation run's inputs from its own seed unless they share on purpose",
          "[gemm]") {
  kforge::SoftmaxOperator softmax;
  CHECK(softmax.workload_seed(41, WorkloadKind::kPoisonedOutput) !=
        softmax.workload_seed(41, WorkloadKind::kAccumulate));
}
