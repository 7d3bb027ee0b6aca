// Evicting a range of host memory from every CPU cache level, line by line
// (x86-64: CLFLUSHOPT, else CLFLUSH; AArch64: DC CIVAC). A CPU OpenCL device
// (PoCL) keeps a kernel's buffers in host memory, so its cache flush can
// evict exactly those buffers instead of writing twice the last-level cache:
// on a host with a 260 MiB L3 that write took 66 ms per timed launch
// (docs/measurement.md, "Time").
#pragma once

#include <cstddef>

namespace kforge {

/// Whether this build and this CPU can evict host memory line by line.
bool host_cache_eviction_available();

/// Writes back and evicts every cache line of [data, data + bytes) from all
/// cache levels of the coherence domain, then fences, so that the next access
/// to the range reads memory. The contents are unchanged. A no-op where
/// host_cache_eviction_available() is false.
void evict_host_range(const void* data, std::size_t bytes);

/// The stride evict_host_range steps by: the smallest cache line any
/// supported CPU has (a larger line is evicted more than once, never missed).
constexpr std::size_t kEvictionStride = 64;

}  // namespace kforge
