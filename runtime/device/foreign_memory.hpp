// Memory and streams a caller owns, used in place: a PyTorch CUDA tensor is
// launched on without a copy, on the caller's stream. The CUDA and HIP
// devices offer it (GpuDevice); others do not, and foreign_memory() says so.
// It is apart from Device because only a device in the caller's own address
// space and context can offer it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "runtime/device/backend.hpp"

namespace kforge {

class ForeignMemory {
 public:
  virtual ~ForeignMemory() = default;
  /// A Buffer over `bytes` of device memory at `address`, owned by the
  /// caller: launches read and write it in place, and destroying the Buffer
  /// frees nothing. `ordinal` is the device the memory is on (DLPack's
  /// device_id); kBadInput for a null address, an empty range or another
  /// device's memory.
  virtual Result<std::unique_ptr<Buffer>> borrow(std::uintptr_t address, std::size_t bytes, int ordinal) = 0;
  /// Launches (and library calls) from the calling thread on this device go
  /// to `stream` (a CUstream or hipStream_t the caller owns, 0 its legacy
  /// default stream) until use_own_stream(). Work the caller queued on
  /// that stream before runs first; an enqueue() does not wait, a launch()
  /// is timed with events and waited for. Device::synchronize() waits for
  /// every stream, the caller's included.
  virtual void use_caller_stream(std::uintptr_t stream) = 0;
  virtual void use_own_stream() = 0;
};

/// `device`'s ForeignMemory, or nullptr where its backend has none (OpenCL).
inline ForeignMemory* foreign_memory(Device& device) {
  return dynamic_cast<ForeignMemory*>(&device);
}

/// use_caller_stream for a scope; nothing when `memory` is null.
class CallerStream {
 public:
  CallerStream(ForeignMemory* memory, std::uintptr_t stream) : memory_(memory) {
    if (memory_) memory_->use_caller_stream(stream);
  }
  ~CallerStream() {
    if (memory_) memory_->use_own_stream();
  }
  CallerStream(const CallerStream&) = delete;
  CallerStream& operator=(const CallerStream&) = delete;

 private:
  ForeignMemory* memory_;
};

}  // namespace kforge
