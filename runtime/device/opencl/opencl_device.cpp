// The OpenCL device: buffers, program loads, and launches timed with
// profiling events (its cache flush in opencl_cache_flush.cpp).
#include "runtime/device/opencl/opencl_device.hpp"

#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string_view>

#include "runtime/device/host/host_cache_eviction.hpp"
#include "runtime/device/launch_check.hpp"
#include "runtime/device/opencl/opencl_backend.hpp"
#include "runtime/device/opencl/opencl_device_info.hpp"
#include "runtime/libraries/library_kernel.hpp"
#include "runtime/profiling/cpu_clock_reader.hpp"
#include "runtime/profiling/pci_clock_reader.hpp"

namespace kforge::opencl {

OpenClDevice::OpenClDevice(DeviceInfo info, cl_device_id device, ContextHandle context, QueueHandle queue)
    : info_(std::move(info)),
      device_(device),
      context_(std::move(context)),
      queue_(std::move(queue)),
      compiler_(context_.get(), device_, info_.compiler, info_.compiler_version) {
  std::size_t sizes[3] = {0, 0, 0};
  clGetDeviceInfo(device_, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof sizes, sizes, nullptr);
  for (int i = 0; i < 3; ++i) max_item_sizes_[i] = static_cast<std::int64_t>(sizes[i]);
  max_alloc_bytes_ = device_value<cl_ulong>(device_, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  // A CPU device's buffers go in host memory of kforge's own, so that its
  // cache flush can evict just them (flush_cache). KFORGE_CPU_CACHE_FLUSH=fill
  // keeps the fill, e.g. to compare the two.
  const char* method = std::getenv("KFORGE_CPU_CACHE_FLUSH");
  evict_buffers_ = info_.device_type == DeviceType::kCpu && host_cache_eviction_available() &&
                   !(method && std::string_view(method) == "fill");
}

Result<std::unique_ptr<Buffer>> OpenClDevice::allocate(std::size_t bytes) {
  if (evict_buffers_) return allocate_in_host_memory(bytes);
  cl_int err = CL_SUCCESS;
  // A zero-byte buffer is legal here (an empty tensor); OpenCL is not.
  MemHandle mem(
      clCreateBuffer(context_.get(), CL_MEM_READ_WRITE, std::max<std::size_t>(bytes, 1), nullptr, &err));
  if (err != CL_SUCCESS) {
    return cl_error(ErrorCode::kResource, "clCreateBuffer of " + std::to_string(bytes) + " bytes", err);
  }
  return std::unique_ptr<Buffer>(std::make_unique<OpenClBuffer>(std::move(mem), bytes));
}

namespace {

/// Ok, or the error of the blocking copy `what`.
Status copied(cl_int err, const char* what) {
  return err == CL_SUCCESS ? ok_status() : Status(cl_error(ErrorCode::kLaunch, what, err));
}

}  // namespace

Status OpenClDevice::write(Buffer& dst, const void* src, std::size_t bytes) {
  KF_TRY_ASSIGN(buf, checked_buffer(dst, bytes, Transfer::kWrite));
  if (bytes == 0) return ok_status();
  return copied(clEnqueueWriteBuffer(queue_.get(), buf->mem(), CL_TRUE, 0, bytes, src, 0, nullptr, nullptr),
                "clEnqueueWriteBuffer");
}

Status OpenClDevice::read(const Buffer& src, void* dst, std::size_t bytes) {
  KF_TRY_ASSIGN(buf, checked_buffer(src, bytes, Transfer::kRead));
  if (bytes == 0) return ok_status();
  return copied(clEnqueueReadBuffer(queue_.get(), buf->mem(), CL_TRUE, 0, bytes, dst, 0, nullptr, nullptr),
                "clEnqueueReadBuffer");
}

ClockReader* OpenClDevice::clock_reader() {
  if (!clocks_tried_) {
    clocks_tried_ = true;
    if (info_.device_type == DeviceType::kCpu) {
      if (auto r = make_cpu_clock_reader(); r.ok()) clocks_ = std::move(r).value();
    } else if (auto pci = device_pci_address(device_, device_string(device_, CL_DEVICE_EXTENSIONS))) {
      const auto vendor = device_value<cl_uint>(device_, CL_DEVICE_VENDOR_ID);
      if (auto r = open_pci_clock_reader(vendor, *pci, info_.arch); r.ok()) clocks_ = std::move(r).value();
    }
  }
  return clocks_.get();
}

Result<const OpenClBuffer*> OpenClDevice::checked_buffer(const Buffer& b, std::size_t bytes,
                                                         Transfer direction) const {
  auto* buf = dynamic_cast<const OpenClBuffer*>(&b);
  if (!buf) {
    return Error::bad_input(std::string(direction == Transfer::kWrite ? "write" : "read") +
                            ": buffer is not an OpenCL buffer");
  }
  KF_TRY(check_transfer_size(direction, bytes, buf->size()));
  return buf;
}

std::vector<std::string> OpenClKernel::parameter_types() const {
  cl_uint count = 0;
  if (clGetKernelInfo(kernel_.get(), CL_KERNEL_NUM_ARGS, sizeof count, &count, nullptr) != CL_SUCCESS) return {};
  std::vector<std::string> types;
  for (cl_uint i = 0; i < count; ++i) {
    char name[256] = {};
    // Needs -cl-kernel-arg-info (OpenClCompiler::full_options); without it: not available.
    if (clGetKernelArgInfo(kernel_.get(), i, CL_KERNEL_ARG_TYPE_NAME, sizeof name - 1, name, nullptr) != CL_SUCCESS) {
      return {};
    }
    types.emplace_back(name);
  }
  return types;
}

/// Rebuilds the program from the binary compile() returned (PoCL and GPU
/// drivers accept their own binaries) and creates the kernel.
Result<std::unique_ptr<Kernel>> OpenClDevice::load(const CompiledKernel& compiled) {
  const std::string& name = compiled.kernel_name;
  // Built by this device's compiler in this process: use the program as is.
  if (auto built = std::static_pointer_cast<BuiltProgram>(compiled.program);
      built && built->context == context_.get()) {
    cl_int err = CL_SUCCESS;
    KernelHandle kernel(clCreateKernel(built->program, name.c_str(), &err));
    if (err != CL_SUCCESS) return cl_error(ErrorCode::kCompile, "load of " + name + ": clCreateKernel", err);
    clRetainProgram(built->program);
    ResourceReport res = kernel_resources(kernel.get(), device_);
    return std::unique_ptr<Kernel>(
        std::make_unique<OpenClKernel>(name, ProgramHandle(built->program), std::move(kernel), res));
  }
  if (compiled.binary.empty() && compiled.fetch_binary) {
    CompiledKernel with_binary = compiled;
    KF_TRY(with_binary.ensure_binary());
    return load(with_binary);
  }
  if (compiled.binary.empty()) {
    return Error{ErrorCode::kBadInput, "load of " + name + ": empty binary", {}};
  }
  const unsigned char* data = compiled.binary.data();
  const std::size_t size = compiled.binary.size();
  cl_int binary_status = CL_SUCCESS;
  cl_int err = CL_SUCCESS;
  ProgramHandle program(
      clCreateProgramWithBinary(context_.get(), 1, &device_, &size, &data, &binary_status, &err));
  if (err != CL_SUCCESS || binary_status != CL_SUCCESS) {
    return cl_error(ErrorCode::kCompile, "load of " + name + ": clCreateProgramWithBinary",
                    err != CL_SUCCESS ? err : binary_status);
  }
  std::string log;
  KF_TRY_ASSIGN(kernel, build_and_create(program.get(), device_, name,
                                         OpenClCompiler::full_options(compiled.options), log));
  ResourceReport res = kernel_resources(kernel.get(), device_);
  return std::unique_ptr<Kernel>(
      std::make_unique<OpenClKernel>(name, std::move(program), std::move(kernel), res));
}

namespace {

/// Set by event callbacks (on one of the runtime's threads) once a command
/// runs or ends; launch() waits on it.
struct RunningState {
  std::mutex mutex;
  std::condition_variable changed;
  bool done = false;
  void reached() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      done = true;
    }
    changed.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [this] { return done; });
  }
  static void CL_CALLBACK notify(cl_event, cl_int, void* data) {
    auto* held = static_cast<std::shared_ptr<RunningState>*>(data);
    (*held)->reached();
    delete held;
  }
};

/// Waits, without spinning, until the command of `event` runs (or ends, or
/// fails), so that the caller is told on its own thread.
void wait_until_running(cl_event event) {
  auto state = std::make_shared<RunningState>();
  for (cl_int when : {CL_RUNNING, CL_COMPLETE}) {
    auto* held = new std::shared_ptr<RunningState>(state);  // released by the callback
    if (clSetEventCallback(event, when, &RunningState::notify, held) != CL_SUCCESS) {
      delete held;
      state->reached();  // no callback: say so now rather than never
    }
  }
  state->wait();
}

/// Sets `args` on `k`'s kernel in order.
Status set_kernel_args(const OpenClKernel& k, const std::vector<KernelArg>& args) {
  const auto where = [&] { return "launch of " + k.name(); };  // built for an error only
  for (std::size_t i = 0; i < args.size(); ++i) {
    const KernelArg& a = args[i];
    const auto index = static_cast<cl_uint>(i);
    cl_int err = CL_SUCCESS;
    switch (a.kind) {
      case KernelArg::Kind::kBuffer: {
        auto* buf = a.buffer ? dynamic_cast<OpenClBuffer*>(a.buffer) : nullptr;
        if (!buf) {
          return Error::bad_input(where() + ": argument " + std::to_string(i) + " is not an OpenCL buffer");
        }
        cl_mem mem = buf->mem();
        err = clSetKernelArg(k.handle(), index, sizeof mem, &mem);
        break;
      }
      case KernelArg::Kind::kInt32: {
        cl_int v = a.i32;
        err = clSetKernelArg(k.handle(), index, sizeof v, &v);
        break;
      }
      case KernelArg::Kind::kFloat32: {
        cl_float v = a.f32;
        err = clSetKernelArg(k.handle(), index, sizeof v, &v);
        break;
      }
    }
    if (err != CL_SUCCESS) {
      return cl_error(ErrorCode::kLaunch, where() + ": clSetKernelArg(" + std::to_string(i) + ")", err);
    }
  }
  return ok_status();
}

}  // namespace

Result<cl_event> OpenClDevice::enqueue_ndrange(OpenClKernel& k, const std::vector<KernelArg>& args,
                                               const LaunchGeometry& geometry, bool with_event) {
  KF_TRY(check_launch_geometry(
      k, geometry, {max_item_sizes_, info_.local_mem_bytes},
      {"CL_INVALID_WORK_ITEM_SIZE", "CL_INVALID_WORK_GROUP_SIZE", "CL_OUT_OF_RESOURCES"}));
  KF_TRY(set_kernel_args(k, args));
  std::size_t global[3];
  std::size_t local[3];
  for (int i = 0; i < 3; ++i) {
    local[i] = static_cast<std::size_t>(geometry.block[i]);
    global[i] = static_cast<std::size_t>(geometry.grid[i] * geometry.block[i]);
  }
  cl_event event = nullptr;
  const cl_int err = clEnqueueNDRangeKernel(queue_.get(), k.handle(), 3, nullptr, global, local, 0, nullptr,
                                            with_event ? &event : nullptr);
  if (err == CL_SUCCESS) return event;
  const bool resource = err == CL_INVALID_WORK_GROUP_SIZE || err == CL_INVALID_WORK_ITEM_SIZE ||
                        err == CL_OUT_OF_RESOURCES || err == CL_MEM_OBJECT_ALLOCATION_FAILURE;
  Error e = cl_error(resource ? ErrorCode::kResource : ErrorCode::kLaunch,
                     "launch of " + k.name() + ": clEnqueueNDRangeKernel", err);
  e.context = geometry_text(geometry);
  return e;
}

Status OpenClDevice::enqueue(Kernel& kernel, const std::vector<KernelArg>& args, const LaunchGeometry& geometry) {
  if (auto* call = dynamic_cast<LibraryKernel*>(&kernel)) return call->enqueue(args, geometry);
  auto* k = dynamic_cast<OpenClKernel*>(&kernel);
  if (!k) return Error::bad_input("enqueue: kernel was not loaded by the OpenCL backend");
  KF_TRY(enqueue_ndrange(*k, args, geometry, false));
  // Submitted now, so that the device works while the caller goes on.
  if (cl_int err = clFlush(queue_.get()); err != CL_SUCCESS)
    return cl_error(ErrorCode::kLaunch, "launch of " + k->name() + ": clFlush", err);
  return ok_status();
}

Status OpenClDevice::synchronize() {
  if (cl_int err = clFinish(queue_.get()); err != CL_SUCCESS)
    return cl_error(ErrorCode::kLaunch, "waiting for the queue (clFinish)", err);
  return ok_status();
}

Result<double> OpenClDevice::launch(Kernel& kernel, const std::vector<KernelArg>& args,
                                    const LaunchGeometry& geometry, const OnRunning& on_running) {
  if (auto* call = dynamic_cast<LibraryKernel*>(&kernel)) return call->run(args, geometry, on_running);
  auto* k = dynamic_cast<OpenClKernel*>(&kernel);
  if (!k) return Error::bad_input("launch: kernel was not loaded by the OpenCL backend");
  const std::string where = "launch of " + k->name();
  KF_TRY_ASSIGN(raw_event, enqueue_ndrange(*k, args, geometry, true));
  EventHandle event(raw_event);
  if (on_running) {
    wait_until_running(raw_event);
    on_running();
  }
  cl_int err = clWaitForEvents(1, &raw_event);
  cl_int status = CL_COMPLETE;
  clGetEventInfo(raw_event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
  if (err != CL_SUCCESS || status < 0) {
    Error e = cl_error(ErrorCode::kLaunch, where + ": kernel execution failed", status < 0 ? status : err);
    e.context = geometry_text(geometry);
    return e;
  }
  cl_ulong start = 0;
  cl_ulong end = 0;
  err = clGetEventProfilingInfo(raw_event, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
  if (err == CL_SUCCESS) {
    err = clGetEventProfilingInfo(raw_event, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
  }
  if (err != CL_SUCCESS) return cl_error(ErrorCode::kLaunch, where + ": profiling info", err);
  return end > start ? static_cast<double>(end - start) * 1e-6 : 0.0;
}

}  // namespace kforge::opencl

namespace kforge {

Result<std::unique_ptr<Device>> open_opencl_device(std::size_t index) {
  const auto refs = opencl::enumerate_devices();
  if (index >= refs.size()) {
    return Error::not_found("no device opencl:" + std::to_string(index) + ": " + std::to_string(refs.size()) +
                            " OpenCL device(s) present");
  }
  const opencl::ClDeviceRef& ref = refs[index];
  DeviceInfo info = opencl::describe(ref, index);
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(ref.platform),
                                   0};
  cl_int err = CL_SUCCESS;
  opencl::ContextHandle context(clCreateContext(props, 1, &ref.device, nullptr, nullptr, &err));
  if (err != CL_SUCCESS) {
    return opencl::cl_error(ErrorCode::kLaunch, "opencl:" + std::to_string(index) + ": clCreateContext", err);
  }
  opencl::QueueHandle queue(clCreateCommandQueue(context.get(), ref.device, CL_QUEUE_PROFILING_ENABLE, &err));
  if (err != CL_SUCCESS) {
    return opencl::cl_error(ErrorCode::kLaunch, "opencl:" + std::to_string(index) + ": clCreateCommandQueue",
                            err);
  }
  return std::unique_ptr<Device>(std::make_unique<opencl::OpenClDevice>(
      std::move(info), ref.device, std::move(context), std::move(queue)));
}

}  // namespace kforge
