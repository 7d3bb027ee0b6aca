// How much a cache flush writes: enough to evict every cache between the
// device's memory and its cores, so that each timed launch starts cold
// (docs/measurement.md, "Time"). One rule for every backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/device/device_info.hpp"

namespace kforge {

/// How a device flushes its caches (Device::flush_cache).
enum class CacheFlushMethod {
  kFill,   ///< writes a buffer larger than the caches
  kEvict,  ///< evicts the kernel's own buffers line by line (CPU devices, host memory)
};
/// The name a sweep records (settings "cache_flush_method"): "fill", "evict".
std::string_view flush_method_name(CacheFlushMethod m);

/// What one cache flush of a device does (Device::cache_flush).
struct CacheFlush {
  CacheFlushMethod method = CacheFlushMethod::kFill;
  std::size_t bytes = 0;  ///< what each fill writes (cache_flush_bytes)
};

/// A cache between memory and the L2 that `info.cache_bytes` leaves out:
/// AMD's Infinity Cache (MALL) on GPUs whose driver reports only the L2.
/// From the architecture table (runtime/device/target.hpp) for a known AMD GPU; an
/// AMD GPU it does not know is assumed to have the largest one AMD ships
/// (256 MiB, CDNA 3), since flushing too little makes timings warm while
/// flushing too much only costs a longer memset. 0 for every other device.
std::int64_t memory_side_cache_bytes(const DeviceInfo& info);

/// The bytes one flush writes: twice the larger of the reported cache and
/// the memory-side cache, at least 32 MiB, at most `max_bytes` (0: no limit;
/// OpenCL's per-allocation limit) and under a quarter of the device's
/// memory, in whole 16-byte units (OpenCL writes it with a 16-byte pattern).
std::size_t cache_flush_bytes(const DeviceInfo& info, std::size_t max_bytes = 0);

}  // namespace kforge
