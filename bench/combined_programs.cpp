// What building several instances as one program saves on an OpenCL
// compiler (generator/program_combiner.hpp): the same gemm_simt_tiled
// instances built one program each and then as one combined program, each
// in a fresh PoCL kernel cache (POCL_CACHE_DIR, set before the device is
// opened); per way, the build seconds and the first launches' seconds (one
// work-group each, where PoCL generates the machine code). Also the build of
// a trivial kernel: the fixed cost every program pays.
// Prints one JSON object.
//
//   kforge_bench_combined_programs MODE N     MODE: alone | combined | trivial
//
// One mode per process, so each starts with PoCL's kernel library loaded
// once (a warm-up build) and an empty cache (bench/combined_programs.py).
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "generator/gemm_operator.hpp"
#include "generator/instance.hpp"
#include "generator/operator.hpp"
#include "generator/program_combiner.hpp"
#include "generator/search_space.hpp"
#include "runtime/device/device_registry.hpp"
#include "templates/builtin_templates.hpp"

using namespace kforge;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

int fail(const std::string& why) {
  std::cerr << "kforge_bench_combined_programs: " << why << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return fail("usage: kforge_bench_combined_programs alone|combined|trivial N");
  const std::string mode = argv[1];
  const int n = std::atoi(argv[2]);
  auto dev = open_device("opencl:0");
  if (!dev.ok()) return fail(dev.error().message);
  Device& device = **dev;
  Compiler& compiler = device.compiler();
  // Loads the kernel library and sets up the compiler, once per process.
  const char* warm = "__kernel void warm(__global float* a) { a[0] = 1.0f; }";
  if (!compiler.compile(warm, "warm", "").ok()) return fail("warm-up build failed");

  nlohmann::ordered_json out{{"mode", mode}, {"instances", n}, {"device", device.info().name}};
  if (mode == "trivial") {
    double build_s = 0;
    for (int i = 0; i < n; ++i) {
      const std::string src = "__kernel void t" + std::to_string(i) + "(__global float* a) { a[get_global_id(0)] = " +
                              std::to_string(i) + ".0f; }";
      const auto t0 = Clock::now();
      if (!compiler.compile(src, "t" + std::to_string(i), "").ok()) return fail("trivial build failed");
      build_s += since(t0);
    }
    out["build_s"] = build_s;
    std::cout << out.dump() << "\n";
    return 0;
  }

  // n valid configurations of gemm_simt_tiled for gemm f32 NN 64^3, spread
  // evenly over its space.
  auto templates = builtin_templates();
  if (!templates.ok()) return fail(templates.error().message);
  const TemplateSource* tpl = nullptr;
  for (const auto& t : *templates) {
    if (t.manifest.name == "gemm_simt_tiled") tpl = &t;
  }
  if (!tpl) return fail("no gemm_simt_tiled");
  const GemmOperator op;
  Problem problem;
  problem.op = "gemm";
  problem.dims = {{"M", 64}, {"N", 64}, {"K", 64}, {"batch", 1}};
  problem = op.normalize(problem).value();
  std::vector<Instance> insts;
  const auto space = SearchSpace(tpl->manifest, op, problem, device.info().limits()).enumerate();
  if (!space.ok()) return fail(space.error().message);
  for (int i = 0; i < n && !space->empty(); ++i) {
    const Config& c = (*space)[static_cast<std::size_t>(i) * space->size() / static_cast<std::size_t>(n)];
    auto inst = instantiate(*tpl, prelude_text("opencl"), op, c, problem, device.info().limits());
    if (inst.ok()) insts.push_back(std::move(*inst));
  }
  if (static_cast<int>(insts.size()) != n) return fail("fewer valid configurations than asked for");

  std::vector<CompiledKernel> compiled;
  const auto t_build = Clock::now();
  if (mode == "alone") {
    for (const auto& inst : insts) {
      auto k = compiler.compile(inst.source, inst.kernel_name, "");
      if (!k.ok()) return fail(k.error().message);
      compiled.push_back(std::move(*k));
    }
  } else if (mode == "combined") {
    std::vector<const Instance*> ptrs;
    for (const auto& inst : insts) ptrs.push_back(&inst);
    auto source = combine_instances(*tpl, prelude_text("opencl"), ptrs);
    if (!source.ok()) return fail(source.error().message);
    auto ks = compiler.compile_combined(*source, ptrs, "");
    if (!ks.ok()) return fail(ks.error().message);
    compiled = std::move(*ks);
  } else {
    return fail("unknown mode " + mode);
  }
  out["build_s"] = since(t_build);

  // Inputs for one work-group of each; the results are not checked here
  // (tests/runtime/combined_program_test.cpp does).
  std::vector<std::unique_ptr<Buffer>> buffers;
  for (int i = 0; i < 3; ++i) buffers.push_back(device.allocate(64 * 64 * 4).value());
  std::vector<KernelArg> args{KernelArg::of(std::int32_t{64}), KernelArg::of(std::int32_t{64}),
                              KernelArg::of(std::int32_t{64}), KernelArg::of(1.0f),
                              KernelArg::of(*buffers[0]), KernelArg::of(*buffers[1]),
                              KernelArg::of(0.0f), KernelArg::of(*buffers[2]), KernelArg::of(*buffers[2])};
  const auto t_launch = Clock::now();
  for (std::size_t i = 0; i < insts.size(); ++i) {
    auto kernel = device.load(compiled[i]);
    if (!kernel.ok()) return fail(kernel.error().message);
    LaunchGeometry one = insts[i].geometry;
    one.grid = {1, 1, 1};
    if (auto ms = device.launch(**kernel, args, one); !ms.ok()) return fail(ms.error().message);
  }
  out["first_launches_s"] = since(t_launch);
  std::cout << out.dump() << "\n";
  return 0;
}
