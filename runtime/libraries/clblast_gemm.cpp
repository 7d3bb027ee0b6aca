// One CLBlast GEMM call per launch, timed from a marker enqueued before it to
// the end of the last command CLBlast enqueued (the in-order queue runs
// every kernel CLBlast adds in between): CLBlast may run several kernels
// (padding, transposes), and each counts.
#include "runtime/libraries/clblast_gemm.hpp"

#include <chrono>
#include <cstdlib>

#include "runtime/device/opencl/opencl_device.hpp"
#include "runtime/libraries/clblast_api.hpp"
#include "runtime/libraries/library_kernel.hpp"

namespace kforge {

namespace {

using opencl::cl_error;
using opencl::EventHandle;

struct GemmCall {
  int trans_a = clblast::kNo, trans_b = clblast::kNo;
  bool batched = false;
};

/// The operator's argument list (GemmOperator::arguments): M N K alpha A B beta C bias.
struct GemmArgs {
  std::size_t m = 0, n = 0, k = 0;
  float alpha = 0, beta = 0;
  cl_mem a = nullptr, b = nullptr, c = nullptr;
};

Result<cl_mem> mem_of(const KernelArg& arg, const char* name) {
  const auto* buffer =
      arg.kind == KernelArg::Kind::kBuffer ? dynamic_cast<const opencl::OpenClBuffer*>(arg.buffer) : nullptr;
  if (!buffer)
    return Error::bad_input(std::string("clblast gemm: argument ") + name + " is not an OpenCL buffer");
  return buffer->mem();
}

Result<GemmArgs> gemm_args(const std::vector<KernelArg>& args) {
  if (args.size() != 9)
    return Error::bad_input("clblast gemm: expected the 9 gemm arguments, got " +
                            std::to_string(args.size()));
  using K = KernelArg::Kind;
  for (std::size_t i : {0, 1, 2})
    if (args[i].kind != K::kInt32 || args[i].i32 < 0)
      return Error::bad_input("clblast gemm: M, N, K must be ints >= 0");
  if (args[3].kind != K::kFloat32 || args[6].kind != K::kFloat32)
    return Error::bad_input("clblast gemm: alpha and beta must be floats");
  GemmArgs g;
  g.m = static_cast<std::size_t>(args[0].i32), g.n = static_cast<std::size_t>(args[1].i32);
  g.k = static_cast<std::size_t>(args[2].i32);
  g.alpha = args[3].f32, g.beta = args[6].f32;
  KF_TRY_ASSIGN(a, mem_of(args[4], "A"));
  KF_TRY_ASSIGN(b, mem_of(args[5], "B"));
  KF_TRY_ASSIGN(c, mem_of(args[7], "C"));
  g.a = a, g.b = b, g.c = c;
  return g;
}

class ClblastGemm final : public LibraryKernel {
 public:
  ClblastGemm(const clblast::Api& api, cl_command_queue queue, std::string name, GemmCall call)
      : api_(api), queue_(queue), name_(std::move(name)), call_(call) {}
  const std::string& name() const override { return name_; }

  Result<double> run(const std::vector<KernelArg>& args, const LaunchGeometry& geometry,
                     const OnRunning& on_running) override {
    KF_TRY_ASSIGN(g, gemm_args(args));
    const auto batch = static_cast<std::size_t>(geometry.grid[2]);
    cl_event raw_marker = nullptr;
    cl_int err = clEnqueueMarkerWithWaitList(queue_, 0, nullptr, &raw_marker);
    EventHandle marker(raw_marker);
    if (err != CL_SUCCESS) return cl_error(ErrorCode::kLaunch, name_ + ": marker before the call", err);
    KF_TRY_ASSIGN(raw_done, call(g, batch));
    EventHandle done(raw_done);
    if (on_running) on_running();  // CLBlast built its programs before it enqueued
    err = clWaitForEvents(1, &raw_done);
    cl_int status = CL_COMPLETE;
    clGetEventInfo(raw_done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
    if (err != CL_SUCCESS || status < 0)
      return cl_error(ErrorCode::kLaunch, name_ + ": CLBlast's commands failed", status < 0 ? status : err);
    cl_ulong start = 0, end = 0;
    err = clGetEventProfilingInfo(raw_marker, CL_PROFILING_COMMAND_END, sizeof start, &start, nullptr);
    if (err == CL_SUCCESS)
      err = clGetEventProfilingInfo(raw_done, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
    if (err != CL_SUCCESS) return cl_error(ErrorCode::kLaunch, name_ + ": profiling info", err);
    return end > start ? static_cast<double>(end - start) * 1e-6 : 0.0;
  }

  Status enqueue(const std::vector<KernelArg>& args, const LaunchGeometry& geometry) override {
    KF_TRY_ASSIGN(g, gemm_args(args));
    KF_TRY_ASSIGN(raw_done, call(g, static_cast<std::size_t>(geometry.grid[2])));
    EventHandle done(raw_done);  // released, not waited for
    if (cl_int err = clFlush(queue_); err != CL_SUCCESS)
      return cl_error(ErrorCode::kLaunch, name_ + ": clFlush after the call", err);
    return ok_status();
  }

 private:
  /// Enqueues the call; its event is the last command CLBlast enqueued.
  Result<cl_event> call(const GemmArgs& g, std::size_t batch) {
    const std::size_t lda = call_.trans_a == clblast::kYes ? g.m : g.k;
    const std::size_t ldb = call_.trans_b == clblast::kYes ? g.k : g.n;
    cl_event event = nullptr;
    cl_command_queue queue = queue_;
    int st = 0;
    if (call_.batched) {
      st = api_.sgemm_strided_batched(clblast::kRowMajor, call_.trans_a, call_.trans_b, g.m, g.n, g.k,
                                      g.alpha, g.a, 0, lda, g.m * g.k, g.b, 0, ldb, g.k * g.n, g.beta, g.c, 0,
                                      g.n, g.m * g.n, batch, &queue, &event);
    } else {
      if (batch != 1)
        return Error::bad_input(name_ + ": CLBlastSgemm computes batch 1, not " + std::to_string(batch));
      st = api_.sgemm(clblast::kRowMajor, call_.trans_a, call_.trans_b, g.m, g.n, g.k, g.alpha, g.a, 0, lda,
                      g.b, 0, ldb, g.beta, g.c, 0, g.n, &queue, &event);
    }
    if (st != clblast::kSuccess || event == nullptr) {
      if (event) clReleaseEvent(event);
      return Error{ErrorCode::kLaunch,
                   name_ + ": " + (call_.batched ? "CLBlastSgemmStridedBatched" : "CLBlastSgemm") +
                       " returned status " + std::to_string(st) + " (clblast_c.h's CLBlastStatusCode)",
                   {}};
    }
    return event;
  }

  const clblast::Api& api_;
  cl_command_queue queue_;
  std::string name_;
  GemmCall call_;
};

/// One 16 x 16 x 16 call on scratch buffers: CLBlast builds its GEMM
/// programs for the device at its first call.
Status warm_up(Device& device, ClblastGemm& gemm) {
  constexpr std::int32_t kSide = 16;
  std::vector<std::unique_ptr<Buffer>> buffers;
  for (int i = 0; i < 3; ++i) {
    KF_TRY_ASSIGN(buf, device.allocate(kSide * kSide * sizeof(float)));
    const std::vector<float> zeros(kSide * kSide, 0.0f);
    KF_TRY(device.write(*buf, zeros.data(), zeros.size() * sizeof(float)));
    buffers.push_back(std::move(buf));
  }
  const std::vector<KernelArg> args{
      KernelArg::of(kSide), KernelArg::of(kSide),       KernelArg::of(kSide),
      KernelArg::of(1.0f),  KernelArg::of(*buffers[0]), KernelArg::of(*buffers[1]),
      KernelArg::of(0.0f),  KernelArg::of(*buffers[2]), KernelArg::of(*buffers[2])};
  const LaunchGeometry one;
  auto ran = gemm.run(args, one, {});
  if (!ran.ok()) return ran.error();
  return ok_status();
}

}  // namespace

Result<std::unique_ptr<Kernel>> bind_clblast_gemm(Device& device, const Problem& problem,
                                                  const Config& config, const std::string& name) {
  auto* cl = dynamic_cast<opencl::OpenClDevice*>(&device);
  if (!cl)
    return Error{ErrorCode::kUnsupported, "clblast: " + device.info().name + " is not an OpenCL device", {}};
  const auto& api = clblast::load();
  if (!api.ok()) return Error{ErrorCode::kUnsupported, "unavailable: " + api.error().message, {}};
  GemmCall call;
  call.trans_a = problem.layout.trans_a ? clblast::kYes : clblast::kNo;
  call.trans_b = problem.layout.trans_b ? clblast::kYes : clblast::kNo;
  if (const char* fault = std::getenv("KFORGE_FAULT_CLBLAST_SWAP_TRANSPOSE"); fault && *fault)
    call.trans_a = call.trans_a == clblast::kYes ? clblast::kNo : clblast::kYes;
  auto batched = config.values.find("BATCHED");
  call.batched = batched != config.values.end() && batched->second == 1;
  auto gemm = std::make_unique<ClblastGemm>(**api, cl->queue(), name, call);
  KF_TRY(warm_up(device, *gemm));
  return std::unique_ptr<Kernel>(std::move(gemm));
}

}  // namespace kforge
