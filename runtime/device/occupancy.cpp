// Occupancy from registers, shared memory and block size; the pruning rule.
#include "runtime/device/occupancy.hpp"

#include <algorithm>
#include <limits>

#include "generator/backend_traits.hpp"

namespace kforge {

namespace {

std::int64_t round_up(std::int64_t v, std::int64_t unit) { return unit <= 1 ? v : (v + unit - 1) / unit * unit; }
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::string percent(double v) {
  const int tenths = static_cast<int>(v * 1000.0 + 0.5);
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + "%";
}

}  // namespace

OccupancyDetail occupancy_detail(const ResourceReport& r, std::int64_t threads_per_block,
                                 const ArchResources& a) {
  OccupancyDetail d;
  const std::int64_t w = std::max<std::int64_t>(a.simd_width, 1);
  d.max_warps_per_unit = a.max_threads_per_unit / w;
  if (threads_per_block <= 0 || threads_per_block > a.max_threads_per_block) {
    d.limiter = "block size";
    return d;
  }
  d.warps_per_block = ceil_div(threads_per_block, w);
  // The tightest resource wins; on a tie the first named here.
  d.blocks_per_unit = std::numeric_limits<std::int64_t>::max();
  d.limiter.clear();
  auto limit = [&d](std::int64_t blocks, const char* what) {
    if (blocks < d.blocks_per_unit) {
      d.blocks_per_unit = blocks;
      d.limiter = what;
    }
  };
  limit(a.max_blocks_per_unit, "blocks");
  limit(d.max_warps_per_unit / d.warps_per_block, "threads");
  if (r.registers > 0) {
    if (is_backend(a.backend, BackendId::kHip)) {
      // Each SIMD holds its own VGPR file; a block's waves spread over the SIMDs.
      const std::int64_t per_wave = round_up(r.registers, a.register_alloc_unit);
      const std::int64_t waves_per_simd =
          per_wave > a.registers_per_unit ? 0 : std::min(a.max_waves_per_simd, a.registers_per_unit / per_wave);
      limit(waves_per_simd * a.simds_per_unit / d.warps_per_block, "registers");
    } else {
      const std::int64_t per_warp = round_up(r.registers * w, a.register_alloc_unit);
      const std::int64_t warps = r.registers > a.max_registers_per_thread ? 0 : a.registers_per_unit / per_warp;
      limit(warps / d.warps_per_block, "registers");
    }
  }
  if (r.local_mem_bytes > 0) {
    const std::int64_t per_block = round_up(r.local_mem_bytes + a.shared_reserved_per_block, a.shared_alloc_unit);
    const std::int64_t blocks = r.local_mem_bytes > a.shared_per_block_optin ? 0 : a.shared_per_unit / per_block;
    limit(blocks, "shared memory");
  }
  d.occupancy = d.max_warps_per_unit > 0
                    ? static_cast<double>(d.blocks_per_unit * d.warps_per_block) / static_cast<double>(d.max_warps_per_unit)
                    : 0.0;
  return d;
}

double occupancy(const ResourceReport& r, std::int64_t threads_per_block, const DeviceInfo& target) {
  auto a = arch_resources(target.backend, target.arch);
  if (!a) return -1.0;
  return occupancy_detail(r, threads_per_block, *a).occupancy;
}

/// "SM", "CU": what the backend calls the unit blocks are placed on.
static std::string_view unit_word(std::string_view backend) {
  const BackendTraits* b = find_backend(backend);
  return b ? b->compute_unit_word : "compute unit";
}

std::optional<std::string> prune_reason(const ResourceReport& r, const DeviceInfo& target,
                                        std::int64_t threads_per_block) {
  for (const auto& d : r.diagnostics) {
    // A serialized wgmma pipeline runs the tensor cores a fraction of the
    // time; the same template's other configurations, or another template,
    // do better (docs/compile-only.md, "Compiler diagnostics").
    if (d.serializes_tensor_ops) return "ptxas " + d.code + " on " + target.arch + ": " + d.message;
  }
  if (r.spill_stores > 0 || r.spill_loads > 0) {
    // hipRTC's code object counts spilled registers; ptxas reports bytes.
    if (is_backend(target.backend, BackendId::kHip)) {
      return "spills registers on " + target.arch + ": " + std::to_string(std::max<std::int64_t>(r.spill_stores, 0)) +
             " registers spilled (VGPRs + SGPRs)";
    }
    return "spills registers on " + target.arch + ": " + std::to_string(std::max<std::int64_t>(r.spill_stores, 0)) +
           " bytes of spill stores, " + std::to_string(std::max<std::int64_t>(r.spill_loads, 0)) +
           " bytes of spill loads";
  }
  auto a = arch_resources(target.backend, target.arch);
  if (!a) return std::nullopt;
  const std::int64_t threads = threads_per_block > 0 ? threads_per_block : r.max_block_threads;
  if (threads <= 0) return std::nullopt;  // block size unknown: nothing to compute
  if (r.local_mem_bytes > a->shared_per_block_optin) {
    return "needs " + std::to_string(r.local_mem_bytes) + " bytes of shared memory per block; " + target.arch +
           " allows " + std::to_string(a->shared_per_block_optin);
  }
  const OccupancyDetail d = occupancy_detail(r, threads, *a);
  if (d.occupancy < kMinUsefulOccupancy) {
    return "occupancy " + percent(d.occupancy) + " on " + target.arch + " (" + std::to_string(d.blocks_per_unit) +
           " block(s) of " + std::to_string(threads) + " threads per " + std::string(unit_word(a->backend)) +
           ", limited by " + d.limiter + ", " + std::to_string(r.registers) + " registers/thread, " +
           std::to_string(std::max<std::int64_t>(r.local_mem_bytes, 0)) + " B shared) is below the useful minimum " +
           percent(kMinUsefulOccupancy);
  }
  return std::nullopt;
}

std::optional<std::string> prune_reason(const ResourceReport& r, const DeviceInfo& target) {
  return prune_reason(r, target, 0);
}

}  // namespace kforge
