// The workspaces of a kernel launched by a foreign ABI (launch_abi.hpp,
// AbiWorkspace: a Triton manifest's `workspace` arguments): memory the
// kernel needs that the operator's contract does not hold. A CUDA or HIP
// device makes them at the kernel's first launch on a stream, one set per
// stream (launches on two streams may overlap; launches on one run in
// order), zeroes the zeroed ones once, and passes them in their argument
// slots. A kernel must leave a zeroed workspace zero (a split kernel's
// tickets go back to 0), so after a launch the device waits for it checks
// that, and fails the launch naming the workspace and the first non-zero
// byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "runtime/device/backend.hpp"
#include "runtime/device/launch_abi.hpp"

namespace kforge {

/// How a device makes and reads workspace memory.
struct WorkspaceMemory {
  std::function<Result<std::unique_ptr<Buffer>>(std::size_t bytes)> allocate;
  std::function<Status(Buffer& buffer)> zero;  ///< all of the buffer
  std::function<Status(const Buffer& buffer, void* dst, std::size_t bytes)> read;
};

class KernelWorkspaces {
 public:
  /// The buffers of `specs` (in their order) for launches on `stream`, made
  /// and the zeroed ones zeroed at the first call for that stream. All or
  /// none: where making one fails, none of the stream's is kept.
  Result<std::vector<Buffer*>> for_stream(std::uintptr_t stream, const std::vector<AbiWorkspace>& specs,
                                          const WorkspaceMemory& memory);

  /// After a launch on `stream` was waited for: kLaunch where a zeroed
  /// workspace is not all zero ("scale left workspace tickets non-zero:
  /// byte 5 of 4000 is 0x01"); the workspace is zeroed again, so that the
  /// next launch starts as the first did.
  Status check_zeroed(std::uintptr_t stream, const std::vector<AbiWorkspace>& specs, const WorkspaceMemory& memory,
                      const std::string& kernel);

  /// Frees every workspace (before the kernel's module goes).
  void clear();

 private:
  std::mutex mutex_;
  std::map<std::uintptr_t, std::vector<std::unique_ptr<Buffer>>> by_stream_;
};

}  // namespace kforge
