// What a timed launch starts from under each way of flushing the caches on a
// CPU OpenCL device (OpenClDevice::flush_cache): a kernel that reads a
// buffer once, at several sizes, and one GEMM instance, each timed after no
// flush (warm), and after the device's flush; plus the flush's own wall
// time. The method is the process's (KFORGE_CPU_CACHE_FLUSH=fill for the
// fill, else "evict" where the device supports it), so
// bench/cache_flush_methods.py runs one process per method, alternated.
// Prints one JSON object.
//
//   kforge_bench_cache_flush_methods REPS
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "generator/gemm_operator.hpp"
#include "generator/instance.hpp"
#include "generator/operator.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "runtime/device/device_registry.hpp"
#include "templates/builtin_templates.hpp"

using namespace kforge;

namespace {

using Clock = std::chrono::steady_clock;

int fail(const std::string& why) {
  std::cerr << "kforge_bench_cache_flush_methods: " << why << "\n";
  return 1;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : (v[(v.size() - 1) / 2] + v[v.size() / 2]) / 2;
}

// Times `reps` launches after no flush and `reps` after a flush, alternated
// (one of each per round), and the flushes' wall time.
Result<nlohmann::ordered_json> time_both(Device& device, Kernel& kernel, const std::vector<KernelArg>& args,
                                         const LaunchGeometry& g, int reps) {
  std::vector<double> warm, flushed, flush_ms;
  KF_TRY_ASSIGN(first, device.launch(kernel, args, g));  // code and buffers ready
  (void)first;
  for (int r = 0; r < reps; ++r) {
    KF_TRY_ASSIGN(w, device.launch(kernel, args, g));
    warm.push_back(w);
    const auto t0 = Clock::now();
    KF_TRY(device.flush_cache());
    flush_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    KF_TRY_ASSIGN(f, device.launch(kernel, args, g));
    flushed.push_back(f);
  }
  return nlohmann::ordered_json{{"warm_ms", median(warm)}, {"flushed_ms", median(flushed)},
                                {"flush_wall_ms", median(flush_ms)}, {"warm_samples_ms", warm},
                                {"flushed_samples_ms", flushed}, {"flush_samples_ms", flush_ms}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return fail("usage: kforge_bench_cache_flush_methods REPS");
  const int reps = std::atoi(argv[1]);
  auto dev = open_device("opencl:0");
  if (!dev.ok()) return fail(dev.error().message);
  Device& device = **dev;
  const CacheFlush flush = device.cache_flush();
  nlohmann::ordered_json out{{"device", device.info().name},
                             {"method", std::string(flush_method_name(flush.method))},
                             {"cache_flush_bytes", flush.bytes},
                             {"cache_bytes", device.info().cache_bytes}};

  // Reads every float4 of `in` once and writes a quarter as much.
  const char* src =
      "__kernel void read_once(__global const float4* in, __global float* out) {\n"
      "  size_t i = get_global_id(0); float4 v = in[i]; out[i] = v.x + v.y + v.z + v.w; }\n";
  auto compiled = device.compiler().compile(src, "read_once", "");
  if (!compiled.ok()) return fail(compiled.error().message);
  auto kernel = device.load(*compiled);
  if (!kernel.ok()) return fail(kernel.error().message);
  nlohmann::ordered_json reads = nlohmann::ordered_json::array();
  for (std::size_t mib : {1, 8, 64}) {
    const std::size_t bytes = mib << 20;
    auto in = device.allocate(bytes);
    auto o = device.allocate(bytes / 4);
    if (!in.ok() || !o.ok()) return fail("allocation of " + std::to_string(mib) + " MiB");
    std::vector<float> host(bytes / 4, 1.0f);
    if (auto s = device.write(**in, host.data(), bytes); !s.ok()) return fail(s.error().message);
    LaunchGeometry g;
    g.block = {64, 1, 1};
    g.grid = {static_cast<std::int64_t>(bytes / 16 / 64), 1, 1};
    auto t = time_both(device, **kernel, {KernelArg::of(**in), KernelArg::of(**o)}, g, reps);
    if (!t.ok()) return fail(t.error().message);
    (*t)["input_mib"] = mib;
    reads.push_back(*t);
  }
  out["read_once"] = reads;

  // gemm_simt_tiled's default configuration, f32 NN 512^3.
  auto catalog = TemplateCatalog::builtin();
  if (!catalog.ok()) return fail(catalog.error().message);
  const TemplateSource* tpl = catalog->find("gemm_simt_tiled");
  if (!tpl) return fail("no gemm_simt_tiled");
  const GemmOperator op;
  Problem gemm512;
  gemm512.op = "gemm";
  gemm512.dims = {{"M", 512}, {"N", 512}, {"K", 512}, {"batch", 1}};
  auto problem = op.normalize(gemm512);
  if (!problem.ok()) return fail(problem.error().message);
  auto inst = instantiate(*tpl, prelude_text("opencl"), op, tpl->manifest.default_config(), *problem,
                          device.info().limits());
  if (!inst.ok()) return fail(inst.error().message);
  auto gk = device.compiler().compile(inst->source, inst->kernel_name, "");
  if (!gk.ok()) return fail(gk.error().message);
  auto gemm = device.load(*gk);
  if (!gemm.ok()) return fail(gemm.error().message);
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::vector<float> ones(512 * 512, 1.0f);
  for (int i = 0; i < 3; ++i) {
    buffers.push_back(device.allocate(ones.size() * 4).value());
    if (auto s = device.write(*buffers.back(), ones.data(), ones.size() * 4); !s.ok()) return fail(s.error().message);
  }
  std::vector<KernelArg> args{KernelArg::of(std::int32_t{512}), KernelArg::of(std::int32_t{512}),
                              KernelArg::of(std::int32_t{512}), KernelArg::of(1.0f),
                              KernelArg::of(*buffers[0]), KernelArg::of(*buffers[1]),
                              KernelArg::of(0.0f), KernelArg::of(*buffers[2]), KernelArg::of(*buffers[2])};
  auto t = time_both(device, **gemm, args, inst->geometry, reps);
  if (!t.ok()) return fail(t.error().message);
  (*t)["config"] = inst->config_name;
  out["gemm_512"] = *t;
  std::cout << out.dump() << "\n";
  return 0;
}
