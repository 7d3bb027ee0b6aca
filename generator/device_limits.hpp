// The device limits that manifest expressions may read, independent of backend.
#pragma once

#include <cstdint>

#include "generator/expr.hpp"

namespace kforge {

struct DeviceLimits {
  std::int64_t max_block_threads = 256;  ///< work-items per work-group / threads per block
  std::int64_t local_mem_bytes = 32768;  ///< local (shared) memory per block, static
  /// The most local (shared) memory one block may use, dynamic shared memory
  /// after opt-in included (CUDA above 48 KiB); local_mem_bytes where a
  /// backend has no opt-in.
  std::int64_t max_shared_bytes = 32768;
  std::int64_t compute_units = 1;
  std::int64_t simd_width = 1;  ///< warp/wavefront size, or preferred work-group multiple

  /// The baseline against which a manifest's default configuration is checked:
  /// OpenCL 1.2 minimums (32 KiB local memory) and 256 threads per block, which
  /// every device kforge targets exceeds.
  static DeviceLimits baseline() { return {}; }

  /// Adds max_block_threads, local_mem_bytes, max_shared_bytes, compute_units,
  /// simd_width to env.
  void add_to(Env& env) const;
};

/// Names DeviceLimits::add_to defines, for manifest name checking.
inline constexpr const char* kDeviceLimitNames[] = {"max_block_threads", "local_mem_bytes",
                                                    "max_shared_bytes", "compute_units", "simd_width"};

}  // namespace kforge
