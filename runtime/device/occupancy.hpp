// Occupancy a compiled kernel allows on an architecture, and the pruning rule
// the tuner applies before launching a candidate (docs/compile-only.md, "Occupancy").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "runtime/device/backend.hpp"
#include "runtime/device/device_info.hpp"
#include "runtime/device/target.hpp"

namespace kforge {

/// Below this occupancy a candidate is pruned: fewer than 4 resident warps of
/// 64 on an NVIDIA SM, fewer than 2 wavefronts of 32 on a CDNA CU. Tensor-core
/// GEMMs run well at one 4-warp block per SM (6.25%), so the rule only
/// removes what cannot hide any latency.
inline constexpr double kMinUsefulOccupancy = 1.0 / 16.0;

/// Which resource bounds the resident blocks, and how many fit.
struct OccupancyDetail {
  std::int64_t blocks_per_unit = 0;  ///< resident blocks per SM / CU
  std::int64_t warps_per_block = 0;  ///< warps / wavefronts
  std::int64_t max_warps_per_unit = 0;
  double occupancy = 0;              ///< resident warps / max warps, 0..1
  std::string limiter;               ///< "registers", "shared memory", "threads", "blocks", "block size"
};

/// Occupancy from registers per thread (NVIDIA: allocated per warp in units
/// of 256; AMD: VGPRs per lane, allocated in the architecture's granule, each
/// SIMD its own file), shared memory per block (plus the driver's reserve,
/// rounded to the allocation unit) and threads per block, against one SM/CU.
/// Unknown fields (-1) do not limit.
OccupancyDetail occupancy_detail(const ResourceReport& r, std::int64_t threads_per_block,
                                 const ArchResources& arch);

/// occupancy_detail(...).occupancy for `target`'s architecture; -1 when kforge
/// has no resource table for it (arch_resources).
double occupancy(const ResourceReport& r, std::int64_t threads_per_block, const DeviceInfo& target);

/// Why a compiled candidate should not be launched on `target`, or nullopt:
/// the compiler says its tensor-core pipeline is serialized, it spills (spill stores or loads > 0), exceeds the per-thread register or
/// per-block shared-memory limit, or its occupancy is below
/// kMinUsefulOccupancy. Threads per block: `threads_per_block`, or where that
/// is 0 the kernel's declared launch bound (r.max_block_threads). Unknown
/// architecture: only the spill rule applies.
std::optional<std::string> prune_reason(const ResourceReport& r, const DeviceInfo& target,
                                        std::int64_t threads_per_block);
std::optional<std::string> prune_reason(const ResourceReport& r, const DeviceInfo& target);

}  // namespace kforge
