// Compile-only targets ("cuda:sm_90", "hip:gfx90a"): an architecture kforge
// compiles for without the GPU present, with the limits manifests read and
// the per-SM/CU resources occupancy is computed from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "runtime/device/device_info.hpp"

namespace kforge {

/// What one SM (NVIDIA) or CU (AMD) of an architecture holds; the inputs of
/// occupancy() (docs/compile-only.md, "Occupancy"). Values from the vendors'
/// tuning guides and occupancy calculators.
struct ArchResources {
  std::string backend;  ///< "cuda" or "hip"
  std::string arch;     ///< "sm_90", "gfx90a"
  std::int64_t simd_width = 32;             ///< threads per warp / wavefront
  std::int64_t max_threads_per_block = 1024;
  std::int64_t max_threads_per_unit = 2048;  ///< resident threads per SM / CU
  std::int64_t max_blocks_per_unit = 32;
  std::int64_t registers_per_unit = 65536;   ///< 32-bit registers per SM; AMD: VGPRs per SIMD lane
  std::int64_t register_alloc_unit = 256;    ///< NVIDIA: registers per warp, allocated in this unit; AMD: VGPR granule
  std::int64_t max_registers_per_thread = 255;
  std::int64_t simds_per_unit = 1;           ///< AMD: SIMDs per CU (each holds its own VGPR file)
  std::int64_t max_waves_per_simd = 0;       ///< AMD: wavefront slots per SIMD
  std::int64_t shared_per_unit = 0;          ///< shared memory / LDS per SM / CU, bytes
  std::int64_t shared_per_block_static = 0;  ///< static (declared) shared memory per block
  std::int64_t shared_per_block_optin = 0;   ///< the most a block may use (dynamic, after opt-in)
  std::int64_t shared_alloc_unit = 128;
  std::int64_t shared_reserved_per_block = 0;  ///< driver-reserved shared memory per block
  std::int64_t typical_units = 0;            ///< SMs / CUs of the reference part (for DeviceInfo)
  /// A cache on the memory side of the L2 that the driver's cache size leaves
  /// out (AMD's Infinity Cache, MALL), bytes; 0: none.
  std::int64_t memory_side_cache_bytes = 0;
  std::string reference_part;                ///< the part typical_units is taken from
};

/// The resources of `arch` on `backend`, or nullopt for an architecture kforge
/// has no table for. Known: cuda sm_75 sm_80 sm_86 sm_89 sm_90 sm_90a sm_100 sm_120;
/// hip gfx906 gfx908 gfx90a gfx940 gfx941 gfx942 gfx950 (CDNA; RDNA's wave32 register
/// files are not tabled).
std::optional<ArchResources> arch_resources(const std::string& backend, const std::string& arch);

/// Architectures arch_resources() knows for `backend`, in table order.
std::vector<std::string> known_archs(const std::string& backend);

/// A compile-only target.
struct Target {
  std::string backend;  ///< "cuda" or "hip"
  std::string arch;
  ArchResources resources;
  /// A DeviceInfo standing for the architecture: selector the target string,
  /// device_type "gpu", limits from `resources` (local_mem_bytes is the static
  /// per-block limit, as a device of that architecture reports it,
  /// max_shared_bytes the opt-in one), compute
  /// units of the reference part, compiler fields left to the caller.
  DeviceInfo info;
};

/// Parses "cuda:sm_90" or "hip:gfx90a". Errors are kBadInput, one line, e.g.
/// "--target: unknown architecture 'sm_91' for cuda (known: sm_75, ...)".
Result<Target> parse_target(const std::string& text);

}  // namespace kforge
