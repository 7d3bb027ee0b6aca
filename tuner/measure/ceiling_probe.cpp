// measure_peaks: the copy and FMA probe kernels, compiled with the backend's
// prelude, checked, then timed (median of the repetitions).
#include "tuner/measure/ceiling_probe.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "templates/builtin_templates.hpp"

namespace kforge {
namespace {

constexpr int kBlock = 256;
constexpr int kChains = 8;  ///< independent FMA chains per thread: enough to hide the FMA latency

constexpr const char* kProbeSource = R"src(
#if defined(KF_BACKEND_OPENCL)
#define KF_PROBE_FMA(a, b, c) mad(a, b, c)
#else
#define KF_PROBE_FMA(a, b, c) fmaf(a, b, c)
#endif

/* float4 copy, every element read once and written once (grid-stride where the grid is smaller). */
KF_KERNEL void kf_probe_copy(KF_GLOBAL const float4* src, KF_GLOBAL float4* dst, int n) {
  for (int i = KF_BLOCK_X * KF_BLOCK_DIM_X + KF_THREAD_X; i < n; i += KF_GRID_DIM_X * KF_BLOCK_DIM_X)
    dst[i] = src[i];
}

/* Eight independent chains a = a * b + c per thread; the sums are stored so
 * nothing is dead code. */
KF_KERNEL void kf_probe_fma(KF_GLOBAL float* out, int iters, float b, float c) {
  const int gid = KF_BLOCK_X * KF_BLOCK_DIM_X + KF_THREAD_X;
  float a0 = gid * 1e-6f, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4, a5 = a0 + 5, a6 = a0 + 6,
        a7 = a0 + 7;
  for (int i = 0; i < iters; ++i) {
    a0 = KF_PROBE_FMA(a0, b, c); a1 = KF_PROBE_FMA(a1, b, c); a2 = KF_PROBE_FMA(a2, b, c);
    a3 = KF_PROBE_FMA(a3, b, c); a4 = KF_PROBE_FMA(a4, b, c); a5 = KF_PROBE_FMA(a5, b, c);
    a6 = KF_PROBE_FMA(a6, b, c); a7 = KF_PROBE_FMA(a7, b, c);
  }
  out[gid] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}
)src";

Result<std::unique_ptr<Kernel>> load_probe(Device& device, const std::string& name) {
  const std::string source = std::string(prelude_text(device.info().backend)) + kProbeSource;
  KF_TRY_ASSIGN(compiled, device.compiler().compile(source, name, ""));
  return device.load(compiled);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

Result<double> median_launch(Device& device, Kernel& k, const std::vector<KernelArg>& args,
                             const LaunchGeometry& g, int repetitions) {
  std::vector<double> ms;
  for (int i = 0; i < repetitions; ++i) {
    KF_TRY_ASSIGN(t, device.launch(k, args, g));
    ms.push_back(t);
  }
  return median(std::move(ms));
}

/// The copy size: the request, within a quarter of the memory and one allocation.
std::int64_t copy_bytes_for(const DeviceInfo& info, std::int64_t requested) {
  std::int64_t bytes = requested;
  if (info.global_mem_bytes > 0) bytes = std::min(bytes, info.global_mem_bytes / 4);
  if (info.max_alloc_bytes > 0) bytes = std::min(bytes, info.max_alloc_bytes);
  return std::max<std::int64_t>(bytes / 16 * 16, 16 * kBlock);
}

Result<MeasuredPeak> measure_copy(Device& device, const CeilingProbeOptions& o) {
  const std::int64_t bytes = copy_bytes_for(device.info(), o.copy_bytes);
  const auto n = static_cast<std::int32_t>(std::min<std::int64_t>(bytes / 16, INT32_MAX));
  std::vector<float> host(static_cast<std::size_t>(n) * 4);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i % 65521);
  KF_TRY_ASSIGN(src, device.allocate(host.size() * sizeof(float)));
  KF_TRY_ASSIGN(dst, device.allocate(host.size() * sizeof(float)));
  KF_TRY(device.write(*src, host.data(), host.size() * sizeof(float)));
  KF_TRY_ASSIGN(kernel, load_probe(device, "kf_probe_copy"));
  // One element per thread: a CPU runs a work-group's items one after another,
  // so a grid-stride loop there would walk memory with a stride of the grid.
  const std::int64_t blocks = (n + kBlock - 1) / kBlock;
  const LaunchGeometry g{{kBlock, 1, 1}, {blocks, 1, 1}};
  const std::vector<KernelArg> args = {KernelArg::of(*src), KernelArg::of(*dst), KernelArg::of(n)};
  KF_TRY(device.launch(*kernel, args, g));  // first touch of the pages
  std::vector<float> back(host.size());
  KF_TRY(device.read(*dst, back.data(), back.size() * sizeof(float)));
  for (std::size_t i = 0; i < back.size(); i += 4093) {
    if (back[i] != host[i])
      return Error{ErrorCode::kInternal, "copy probe: element " + std::to_string(i) + " is " +
                                             std::to_string(back[i]) + ", not " + std::to_string(host[i]), {}};
  }
  KF_TRY_ASSIGN(ms, median_launch(device, *kernel, args, g, o.repetitions));
  const double moved = 2.0 * static_cast<double>(n) * 16;
  return MeasuredPeak{moved / (ms * 1e6), ms,
                      "float4 copy of 2 x " + std::to_string((n * 16ll) >> 20) + " MiB, " +
                          std::to_string(blocks) + " blocks of " + std::to_string(kBlock) + ", median of " +
                          std::to_string(o.repetitions) + " launches"};
}

/// What thread `gid` of the FMA kernel stores, on the host.
float fma_expected(int gid, int iters, float b, float c) {
  float sum = 0;
  for (int k = 0; k < kChains; ++k) {
    float a = gid * 1e-6f + static_cast<float>(k);
    for (int i = 0; i < iters; ++i) a = std::fma(a, b, c);
    sum += a;
  }
  return sum;
}

Result<MeasuredPeak> measure_fma(Device& device, const CeilingProbeOptions& o) {
  const std::int64_t blocks = std::max<std::int64_t>(device.info().compute_units, 1) * 8;
  const std::int64_t threads = blocks * kBlock;
  KF_TRY_ASSIGN(out, device.allocate(static_cast<std::size_t>(threads) * sizeof(float)));
  KF_TRY_ASSIGN(kernel, load_probe(device, "kf_probe_fma"));
  const LaunchGeometry g{{kBlock, 1, 1}, {blocks, 1, 1}};
  const float b = 0.999f, c = 0.001f;  // a converges to 1: no overflow however long the loop
  std::int32_t iters = 64;
  auto args = [&] { return std::vector<KernelArg>{KernelArg::of(*out), KernelArg::of(iters), KernelArg::of(b), KernelArg::of(c)}; };
  for (;;) {
    KF_TRY_ASSIGN(t, device.launch(*kernel, args(), g));
    if (t >= o.fma_target_ms || iters >= (1 << 22)) break;
    iters = static_cast<std::int32_t>(std::min<double>(1 << 22, iters * std::clamp(o.fma_target_ms / std::max(t, 1e-3), 2.0, 64.0)));
  }
  std::vector<float> back(static_cast<std::size_t>(threads));
  KF_TRY(device.read(*out, back.data(), back.size() * sizeof(float)));
  for (std::int64_t gid : {std::int64_t{0}, threads / 2, threads - 1}) {
    const float want = fma_expected(static_cast<int>(gid), iters, b, c), got = back[static_cast<std::size_t>(gid)];
    if (!(std::fabs(got - want) <= 1e-3f * std::fabs(want)))
      return Error{ErrorCode::kInternal, "FMA probe: thread " + std::to_string(gid) + " stored " +
                                             std::to_string(got) + ", not " + std::to_string(want), {}};
  }
  KF_TRY_ASSIGN(ms, median_launch(device, *kernel, args(), g, o.repetitions));
  const double flops = static_cast<double>(threads) * iters * kChains * 2;
  return MeasuredPeak{flops / (ms * 1e6), ms,
                      std::to_string(kChains) + " FMA chains x " + std::to_string(iters) + " iterations in " +
                          std::to_string(threads) + " threads, median of " + std::to_string(o.repetitions) +
                          " launches"};
}

}  // namespace

Result<MeasuredPeaks> measure_peaks(Device& device, const CeilingProbeOptions& options) {
  MeasuredPeaks p;
  KF_TRY_ASSIGN(copy, measure_copy(device, options));
  p.copy_bandwidth = std::move(copy);
  KF_TRY_ASSIGN(fma, measure_fma(device, options));
  p.fp32_fma = std::move(fma);
  return p;
}

}  // namespace kforge
