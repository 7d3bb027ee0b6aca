// An OpenCL buffer, and the host memory a CPU device's buffers live in,
// which its cache flush evicts (opencl_cache_flush.cpp).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

#include "runtime/device/backend.hpp"
#include "runtime/device/host/host_cache_eviction.hpp"
#include "runtime/device/opencl/opencl_api.hpp"

namespace kforge::opencl {

/// The host memory that a CPU device's buffers live in, which its cache
/// flush evicts line by line (OpenClDevice::flush_cache). Shared with the
/// buffers, which may outlive the device.
class HostBufferRanges {
 public:
  void add(const void* data, std::size_t bytes) {
    std::lock_guard lock(mu_);
    ranges_[data] = bytes;
    bytes_ += bytes;
  }
  void remove(const void* data) {
    std::lock_guard lock(mu_);
    if (auto it = ranges_.find(data); it != ranges_.end()) {
      bytes_ -= it->second;
      ranges_.erase(it);
    }
  }
  std::size_t bytes() const {
    std::lock_guard lock(mu_);
    return bytes_;
  }
  void evict_all() const {
    std::lock_guard lock(mu_);
    for (const auto& [data, bytes] : ranges_) evict_host_range(data, bytes);
  }

 private:
  mutable std::mutex mu_;
  std::map<const void*, std::size_t> ranges_;
  std::size_t bytes_ = 0;
};

class OpenClBuffer final : public Buffer {
 public:
  OpenClBuffer(MemHandle mem, std::size_t size) : mem_(std::move(mem)), size_(size) {}
  /// A buffer in host memory the device uses in place, listed in `ranges`
  /// while it lives.
  OpenClBuffer(MemHandle mem, std::size_t size, const void* host, std::shared_ptr<HostBufferRanges> ranges)
      : mem_(std::move(mem)), size_(size), host_(host), ranges_(std::move(ranges)) {
    ranges_->add(host_, size_);
  }
  ~OpenClBuffer() override {
    if (ranges_) ranges_->remove(host_);
  }
  OpenClBuffer(const OpenClBuffer&) = delete;
  OpenClBuffer& operator=(const OpenClBuffer&) = delete;
  std::size_t size() const override { return size_; }
  cl_mem mem() const { return mem_.get(); }

 private:
  MemHandle mem_;
  std::size_t size_;
  const void* host_ = nullptr;
  std::shared_ptr<HostBufferRanges> ranges_;
};

}  // namespace kforge::opencl
