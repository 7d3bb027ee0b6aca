// The OpenCL device: buffers, program loads, launches timed with profiling
// events, and its cache flush (opencl_cache_flush.cpp).
#pragma once

#include <CL/cl.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/device/backend.hpp"
#include "runtime/device/launch_check.hpp"
#include "runtime/device/opencl/opencl_api.hpp"
#include "runtime/device/opencl/opencl_buffer.hpp"
#include "runtime/device/opencl/opencl_compiler.hpp"

namespace kforge::opencl {

class OpenClKernel final : public Kernel {
 public:
  OpenClKernel(std::string name, ProgramHandle program, KernelHandle kernel, ResourceReport res)
      : name_(std::move(name)), program_(std::move(program)), kernel_(std::move(kernel)), resources_(res) {}
  const std::string& name() const override { return name_; }
  ResourceReport resources() const override { return resources_; }
  std::vector<std::string> parameter_types() const override;
  cl_kernel handle() const { return kernel_.get(); }

 private:
  std::string name_;
  ProgramHandle program_;
  KernelHandle kernel_;
  ResourceReport resources_;
};

class OpenClDevice final : public Device {
 public:
  OpenClDevice(DeviceInfo info, cl_device_id device, ContextHandle context, QueueHandle queue);

  const DeviceInfo& info() const override { return info_; }
  Compiler& compiler() override { return compiler_; }
  Result<std::unique_ptr<Kernel>> load(const CompiledKernel& compiled) override;
  Result<std::unique_ptr<Buffer>> allocate(std::size_t bytes) override;
  Status write(Buffer& dst, const void* src, std::size_t bytes) override;
  Status read(const Buffer& src, void* dst, std::size_t bytes) override;
  Result<double> launch(Kernel& kernel, const std::vector<KernelArg>& args, const LaunchGeometry& geometry,
                        const OnRunning& on_running = {}) override;
  Status enqueue(Kernel& kernel, const std::vector<KernelArg>& args, const LaunchGeometry& geometry) override;
  /// clFinish: the queue is in order, so reads and writes (blocking) wait
  /// for enqueued kernels already.
  Status synchronize() override;
  Status flush_cache() override;
  CacheFlush cache_flush() const override;
  /// A CPU device runs on the host's cores: their clock (cpu_clock_reader.hpp).
  /// A GPU is found by its PCI address in NVML or ROCm SMI
  /// (pci_clock_reader.hpp); none where the device tells no address or the
  /// vendor's library is missing.
  ClockReader* clock_reader() override;
  /// The in-order, profiling queue every launch goes to: OpenCL libraries
  /// (CLBlast) enqueue their work there too.
  cl_command_queue queue() const { return queue_.get(); }

 private:
  Result<const OpenClBuffer*> checked_buffer(const Buffer& b, std::size_t bytes, Transfer direction) const;
  Result<std::unique_ptr<Buffer>> allocate_in_host_memory(std::size_t bytes);
  /// Checks `geometry`, sets `args` and enqueues `k`; its event when
  /// `with_event` (the caller releases it), else null.
  Result<cl_event> enqueue_ndrange(OpenClKernel& k, const std::vector<KernelArg>& args,
                                   const LaunchGeometry& geometry, bool with_event);

  DeviceInfo info_;
  cl_device_id device_;
  ContextHandle context_;
  QueueHandle queue_;
  OpenClCompiler compiler_;
  std::array<std::int64_t, 3> max_item_sizes_{0, 0, 0};
  cl_ulong max_alloc_bytes_ = 0;
  MemHandle flush_buffer_;
  std::size_t flush_bytes_ = 0;
  /// Buffers in host memory, evicted line by line by flush_cache (CPU
  /// devices that use that memory in place); else the fill.
  bool evict_buffers_ = false;
  std::shared_ptr<HostBufferRanges> host_ranges_ = std::make_shared<HostBufferRanges>();
  cl_uint flush_pattern_ = 0;
  std::unique_ptr<ClockReader> clocks_;
  bool clocks_tried_ = false;
};

}  // namespace kforge::opencl
