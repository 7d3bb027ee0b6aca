// What a launch through the runtime costs against the same kernel launched
// with the OpenCL API directly, on one device and queue: N launches of a
// small kernel, then one wait, per mode, in rounds that alternate the modes
// (a loaded machine drifts; each round has them all). Modes:
//   direct           clSetKernelArg + clEnqueueNDRangeKernel, no event
//   lookup_enqueue   Lookup::enqueue (argument checks, then Device::enqueue)
//   lookup_timed     Lookup::launch: events, a wait and the time of each
// Then one decode step of the decoder block (bench/decoder_block_plan.py:
// hidden 256, 4 heads, MLP 688, batch 1 after 256 cached tokens; 12
// launches of 6 operators on device-resident buffers, each problem's default
// selection), N/10 steps per mode and round: the 12 launches enqueued
// directly, through Lookup::enqueue, or through Lookup::launch, then one wait.
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
#include "generator/operator.hpp"
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

/// A problem's buffers, filled from its operator's workload, and its arguments.
struct OperatorBuffers {
  std::vector<std::unique_ptr<Buffer>> bufs;
  std::vector<KernelArg> args;
  OperatorBuffers(Device& device, const Problem& p) {
    const Operator* op = find_operator(p.op);
    if (!op) die("workload", "no operator " + p.op);
    const Workload w = op->make_workload(p, 5, WorkloadKind::kPoisonedOutput);
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

/// One launch prepared three ways: its selection, its loaded kernel and geometry, its buffers.
struct PreparedLaunch {
  Selection sel;
  const PreparedKernel* prepared = nullptr;
  cl_kernel handle = nullptr;
  std::unique_ptr<OperatorBuffers> buffers;
};

PreparedLaunch prepare_launch(Lookup& lookup, Device& device, const Problem& problem) {
  PreparedLaunch l;
  l.sel = ok_or_die(lookup.select(problem), "select " + problem.key());
  l.prepared = ok_or_die(lookup.prepare(l.sel), "prepare " + problem.key());
  auto* kernel = dynamic_cast<opencl::OpenClKernel*>(l.prepared->kernel);
  if (!kernel) die("prepare", l.sel.template_name + " is not an OpenCL kernel");
  l.handle = kernel->handle();
  l.buffers = std::make_unique<OperatorBuffers>(device, l.sel.problem);
  return l;
}

Problem problem_of(const std::string& op, std::map<std::string, std::int64_t> dims,
                   std::map<std::string, std::string> attrs = {}) {
  return Problem{op, std::move(dims), Dtype::kF32, Layout{}, {}, std::move(attrs)};
}

/// The decode step's 12 launches, in the block's order (decoder_block_plan.block_steps).
std::vector<Problem> decode_step() {
  const Problem norm = problem_of("rmsnorm", {{"rows", 1}, {"cols", 256}});
  const Problem proj = problem_of("gemm", {{"M", 1}, {"N", 256}, {"K", 256}, {"batch", 1}});
  const Problem rope = problem_of("rope", {{"tokens", 1}, {"heads", 4}, {"head_dim", 64}});
  return {norm, proj, proj, proj, rope, rope,
          problem_of("attention", {{"B", 1}, {"H", 4}, {"S", 1}, {"SK", 257}, {"D", 64}}, {{"mask", "causal"}}),
          proj, norm,
          problem_of("gemm", {{"M", 1}, {"N", 1376}, {"K", 256}, {"batch", 1}}),
          problem_of("swiglu", {{"rows", 1}, {"cols", 688}}),
          problem_of("gemm", {{"M", 1}, {"N", 256}, {"K", 688}, {"batch", 1}})};
}

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

using Modes = std::map<std::string, std::function<void()>>;

/// Microseconds per call of each mode: `calls` calls then one wait, per mode
/// and round, the modes alternating within each round (round -1 warms up).
std::map<std::string, std::vector<double>> time_modes(const Modes& modes, int calls, int rounds,
                                                      cl_command_queue queue) {
  std::map<std::string, std::vector<double>> us;
  for (int r = -1; r < rounds; ++r) {
    for (const auto& [name, call] : modes) {
      const auto t0 = Clock::now();
      for (int i = 0; i < calls; ++i) call();
      clFinish(queue);
      const double each = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls;
      if (r >= 0) us[name].push_back(each);
    }
  }
  return us;
}

nlohmann::json modes_json(const std::map<std::string, std::vector<double>>& us, const char* unit) {
  nlohmann::json out;
  const double direct = median(us.at("direct"));
  for (const auto& [name, samples] : us) {
    out[name] = {{std::string(unit) + "_median", median(samples)},
                 {unit, samples},
                 {"ratio_to_direct", median(samples) / direct}};
  }
  return out;
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
  cl_command_queue queue = cl_device->queue();

  PreparedLaunch gemm = prepare_launch(*lookup, *device, problem_of("gemm", {{"M", m}, {"N", n}, {"K", k}, {"batch", 1}}));
  const Modes one = {
      {"direct", [&] { enqueue_directly(queue, gemm.handle, gemm.buffers->args, gemm.prepared->geometry); }},
      {"lookup_enqueue", [&] { ok_or_die(lookup->enqueue(gemm.sel, gemm.buffers->args), "enqueue"); }},
      {"lookup_timed", [&] { ok_or_die(lookup->launch(gemm.sel, gemm.buffers->args), "launch"); }},
  };
  nlohmann::json out;
  out["device"] = device->info().to_json();
  out["problem"] = gemm.sel.problem.key();
  out["selection"] = gemm.sel.template_name + " " + gemm.sel.config;
  out["launches_per_round"] = launches;
  out["rounds"] = rounds;
  out["modes"] = modes_json(time_modes(one, launches, rounds, queue), "per_launch_us");

  std::vector<PreparedLaunch> step;
  for (const Problem& p : decode_step()) step.push_back(prepare_launch(*lookup, *device, p));
  const Modes steps = {
      {"direct", [&] {
         for (auto& l : step) enqueue_directly(queue, l.handle, l.buffers->args, l.prepared->geometry);
       }},
      {"lookup_enqueue", [&] {
         for (auto& l : step) ok_or_die(lookup->enqueue(l.sel, l.buffers->args), "enqueue");
       }},
      {"lookup_timed", [&] {
         for (auto& l : step) ok_or_die(lookup->launch(l.sel, l.buffers->args), "launch");
       }},
  };
  const int step_count = std::max(1, launches / 10);
  out["decode_step"]["launches"] = nlohmann::json::array();
  for (const auto& l : step) out["decode_step"]["launches"].push_back(l.sel.problem.key() + " " + l.sel.template_name);
  out["decode_step"]["steps_per_round"] = step_count;
  out["decode_step"]["modes"] = modes_json(time_modes(steps, step_count, rounds, queue), "per_step_us");
  std::printf("%s\n", out.dump(2).c_str());
}
