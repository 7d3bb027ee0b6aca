// The OpenCL device's cache flush: a fill larger than the caches, or on a
// CPU device whose buffers are host memory of kforge's own, their eviction.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "runtime/device/cache_flush.hpp"
#include "runtime/device/opencl/opencl_device.hpp"

namespace kforge::opencl {

CacheFlush OpenClDevice::cache_flush() const {
  return {evict_buffers_ ? CacheFlushMethod::kEvict : CacheFlushMethod::kFill,
          cache_flush_bytes(info_, static_cast<std::size_t>(max_alloc_bytes_))};
}

Result<std::unique_ptr<Buffer>> OpenClDevice::allocate_in_host_memory(std::size_t bytes) {
  constexpr std::size_t kPage = 4096;
  const std::size_t cl_bytes =
      std::max<std::size_t>(bytes, 1);  // a zero-byte buffer is legal here, not in OpenCL
  void* host = std::aligned_alloc(kPage, (cl_bytes + kPage - 1) / kPage * kPage);
  if (!host)
    return Error{ErrorCode::kResource, "host memory of " + std::to_string(bytes) + " bytes for a buffer", {}};
  std::memset(host, 0, std::min<std::size_t>(cl_bytes, 16));
  cl_int err = CL_SUCCESS;
  MemHandle mem(
      clCreateBuffer(context_.get(), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, cl_bytes, host, &err));
  if (err != CL_SUCCESS) {
    std::free(host);
    return cl_error(ErrorCode::kResource,
                    "clCreateBuffer of " + std::to_string(bytes) + " bytes in host memory", err);
  }
  // The memory is freed once OpenCL is done with the buffer, not before.
  err = clSetMemObjectDestructorCallback(
      mem.get(), [](cl_mem, void* p) { std::free(p); }, host);
  if (err != CL_SUCCESS) {
    mem.reset();
    std::free(host);  // no command used it
    return cl_error(ErrorCode::kResource, "clSetMemObjectDestructorCallback", err);
  }
  // The device may keep a copy of its own (OpenCL allows it); then evicting
  // this memory would leave the kernel's data cached. A fill must show up in
  // it, else this device flushes by filling from now on.
  const cl_uchar mark = 0xa5;
  const std::size_t probe = std::min<std::size_t>(cl_bytes, 16);
  err = clEnqueueFillBuffer(queue_.get(), mem.get(), &mark, 1, 0, probe, 0, nullptr, nullptr);
  if (err == CL_SUCCESS) err = clFinish(queue_.get());
  if (err != CL_SUCCESS) return cl_error(ErrorCode::kResource, "clEnqueueFillBuffer of a new buffer", err);
  const auto* seen = static_cast<const cl_uchar*>(host);
  const bool in_place = std::all_of(seen, seen + probe, [&](cl_uchar c) { return c == mark; });
  if (!in_place) {
    evict_buffers_ = false;
    return std::unique_ptr<Buffer>(std::make_unique<OpenClBuffer>(std::move(mem), bytes));
  }
  return std::unique_ptr<Buffer>(std::make_unique<OpenClBuffer>(std::move(mem), bytes, host, host_ranges_));
}

Status OpenClDevice::flush_cache() {
  // Evicting the buffers leaves nothing of the kernel's data cached, as a
  // fill larger than the caches does, at a cost that grows with the buffers
  // rather than the cache: on a host with a 260 MiB L3 the fill took 66 ms
  // a time. Buffers larger than the fill are cheaper to flush by filling.
  const CacheFlush flush = cache_flush();
  if (flush.method == CacheFlushMethod::kEvict && host_ranges_->bytes() <= flush.bytes) {
    // No command may touch the buffers while they are evicted.
    if (cl_int err = clFinish(queue_.get()); err != CL_SUCCESS) {
      return cl_error(ErrorCode::kLaunch, "flush_cache: clFinish", err);
    }
    host_ranges_->evict_all();
    return ok_status();
  }
  if (!flush_buffer_) {
    const std::size_t bytes = flush.bytes;
    cl_int err = CL_SUCCESS;
    flush_buffer_.reset(clCreateBuffer(context_.get(), CL_MEM_READ_WRITE, bytes, nullptr, &err));
    if (err != CL_SUCCESS) {
      return cl_error(ErrorCode::kResource,
                      "flush_cache: clCreateBuffer of " + std::to_string(bytes) + " bytes", err);
    }
    flush_bytes_ = bytes;
  }
  ++flush_pattern_;  // a new value each time, so no layer can skip the write
  // A 16-byte pattern: PoCL fills pattern by pattern on one thread, and 64 MiB
  // took 5.0 ms with 4 bytes against 1.9 ms with 16 (bench/flush_fill.py).
  const cl_uint pattern[4] = {flush_pattern_, flush_pattern_, flush_pattern_, flush_pattern_};
  cl_event raw_event = nullptr;
  cl_int err = clEnqueueFillBuffer(queue_.get(), flush_buffer_.get(), pattern, sizeof pattern, 0,
                                   flush_bytes_, 0, nullptr, &raw_event);
  EventHandle event(raw_event);
  if (err != CL_SUCCESS) {
    return cl_error(ErrorCode::kLaunch, "flush_cache: clEnqueueFillBuffer", err);
  }
  err = clWaitForEvents(1, &raw_event);
  if (err != CL_SUCCESS) return cl_error(ErrorCode::kLaunch, "flush_cache: clWaitForEvents", err);
  return ok_status();
}

}  // namespace kforge::opencl
