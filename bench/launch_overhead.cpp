// What a launch through the runtime costs against the same kernel launched
// with the OpenCL API directly, on one device and queue: N launches of a
// small kernel, then one wait, per mode, in rounds that alternate the modes
// (a loaded machine drifts; each round has them all). Modes:
//   direct           clSetKernelArg + clEnqueueNDRangeKernel, no event
//   lookup_enqueue   Lookup::enqueue (argument checks, then Device::enqueue)
//   lookup_timed     Lookup::launch: events, a wait and the time of each
// Prints one JSON object; bench/launch_overhead.py adds the environment.
//   kforge_bench_launch [M N K] [--launches N] [--rounds R]
#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "generator/gemm_operator.hpp"
#include "runtime/device/device_registry.hpp"
#include "runtime/device/opencl/opencl_device.hpp"
#include "runtime/lookup/lookup.hpp"

using namespace kforge;
using Clock = std::chrono::steady_clock;

namespace {

[[noreturn]] void die(const std::string& what, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", what.c_str(), message.c_str());
  std::exit(1);
}
template <class T>
T ok_or_die(Result<T> r, const std::string& what) {
  if (!r.ok()) die(what, r.error().message);
  return std::move(*r);
}

/// The gemm's buffers, filled from the operator's workload, and its arguments.
struct GemmBuffers {
  std::vector<std::unique_ptr<Buffer>> bufs;
  std::vector<KernelArg> args;
  GemmBuffers(Device& device, const Problem& p) {
    const Workload w = GemmOperator().make_workload(p, 5, WorkloadKind::kPoisonedOutput);
    for (const auto& t : w.tensors) {
      bufs.push_back(ok_or_die(device.allocate(t.bytes.size()), "allocate"));
      ok_or_die(device.write(*bufs.back(), t.bytes.data(), t.bytes.size()), "write");
    }
    for (const auto& a : w.args) {
      if (a.kind == OperatorArg::Kind::kTensor) args.push_back(KernelArg::of(*bufs[a.tensor]));
      else if (a.kind == OperatorArg::Kind::kInt32) args.push_back(KernelArg::of(a.i32));
      else args.push_back(KernelArg::of(a.f32));
    }
  }
};

/// The OpenCL calls a program makes for the same kernel, without kforge.
void enqueue_directly(cl_command_queue queue, cl_kernel kernel, const std::vector<KernelArg>& args,
                      const LaunchGeometry& g) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const KernelArg& a = args[i];
    const auto index = static_cast<cl_uint>(i);
    if (a.kind == KernelArg::Kind::kBuffer) {
      cl_mem mem = static_cast<opencl::OpenClBuffer*>(a.buffer)->mem();
      clSetKernelArg(kernel, index, sizeof mem, &mem);
    } else if (a.kind == KernelArg::Kind::kInt32) {
      clSetKernelArg(kernel, index, sizeof a.i32, &a.i32);
    } else {
      clSetKernelArg(kernel, index, sizeof a.f32, &a.f32);
    }
  }
  std::size_t global[3], local[3];
  for (int i = 0; i < 3; ++i) {
    local[i] = static_cast<std::size_t>(g.block[i]);
    global[i] = static_cast<std::size_t>(g.grid[i] * g.block[i]);
  }
  if (clEnqueueNDRangeKernel(queue, kernel, 3, nullptr, global, local, 0, nullptr, nullptr) != CL_SUCCESS)
    die("direct", "clEnqueueNDRangeKernel failed");
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t m = 16, n = 16, k = 16;
  int launches = 1000, rounds = 7;
  std::vector<std::int64_t> dims;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--launches") == 0 && i + 1 < argc) launches = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else dims.push_back(std::atoll(argv[i]));
  }
  if (dims.size() == 3) m = dims[0], n = dims[1], k = dims[2];
  auto device = ok_or_die(open_device("auto"), "device");
  auto* cl_device = dynamic_cast<opencl::OpenClDevice*>(device.get());
  if (!cl_device) die("device", "the direct baseline needs an OpenCL device, got " + device->info().selector);
  auto catalog = ok_or_die(TemplateCatalog::builtin(), "templates");
  LookupOptions options;
  options.use_binary_cache = false;
  auto lookup = ok_or_die(Lookup::open(options, *device, catalog), "lookup");
  const Problem problem{"gemm", {{"M", m}, {"N", n}, {"K", k}, {"batch", 1}}, Dtype::kF32, Layout{}, {}, {}};
  const Selection sel = ok_or_die(lookup->select(problem), "select");
  const PreparedKernel* prepared = ok_or_die(lookup->prepare(sel), "prepare");
  auto* kernel = dynamic_cast<opencl::OpenClKernel*>(prepared->kernel);
  if (!kernel) die("prepare", sel.template_name + " is not an OpenCL kernel");
  GemmBuffers gemm(*device, sel.problem);
  cl_command_queue queue = cl_device->queue();

  const std::map<std::string, std::function<void()>> modes = {
      {"direct", [&] { enqueue_directly(queue, kernel->handle(), gemm.args, prepared->geometry); }},
      {"lookup_enqueue", [&] { ok_or_die(lookup->enqueue(sel, gemm.args), "enqueue"); }},
      {"lookup_timed", [&] { ok_or_die(lookup->launch(sel, gemm.args), "launch"); }},
  };
  std::map<std::string, std::vector<double>> per_launch_us;
  for (int r = -1; r < rounds; ++r) {  // round -1 warms up
    for (const auto& [name, launch] : modes) {
      const auto t0 = Clock::now();
      for (int i = 0; i < launches; ++i) launch();
      clFinish(queue);
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / launches;
      if (r >= 0) per_launch_us[name].push_back(us);
    }
  }
  nlohmann::json out;
  out["device"] = device->info().to_json();
  out["problem"] = sel.problem.key();
  out["selection"] = sel.template_name + " " + sel.config;
  out["launches_per_round"] = launches;
  out["rounds"] = rounds;
  const double direct = median(per_launch_us["direct"]);
  for (const auto& [name, samples] : per_launch_us) {
    out["modes"][name] = {{"per_launch_us_median", median(samples)},
                          {"per_launch_us", samples},
                          {"ratio_to_direct", median(samples) / direct}};
  }
  std::printf("%s\n", out.dump(2).c_str());
}
