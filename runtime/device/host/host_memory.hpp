// How much host memory this process may still allocate: the kernel's
// MemAvailable, narrowed by a cgroup memory limit (a container's --memory),
// so that a problem too large for the host is refused before its inputs are
// generated instead of ending in std::bad_alloc or the OOM killer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kforge {

struct HostMemory {
  std::uint64_t available_bytes = 0;
  std::string source;  ///< what bounds it: "MemAvailable in /proc/meminfo" or "the cgroup limit (memory.max)"
};

/// MemAvailable, or the room left under the tightest cgroup limit on this
/// process's cgroup or its ancestors when that is less; nullopt where
/// neither can be read (no /proc).
std::optional<HostMemory> host_available_memory();

/// MemAvailable in bytes from /proc/meminfo text ("MemAvailable: 123 kB");
/// nullopt when absent.
std::optional<std::uint64_t> meminfo_available_bytes(const std::string& meminfo);

/// Room under a cgroup v2 limit: memory.max ("max" for none) less
/// memory.current, 0 when over; nullopt where there is no limit or a file
/// does not parse.
std::optional<std::uint64_t> cgroup_v2_memory_room(const std::string& memory_max,
                                                   const std::string& memory_current);

/// The same from cgroup v1's memory.limit_in_bytes and memory.usage_in_bytes
/// (a limit of 2^63 or more, rounded to pages, means none).
std::optional<std::uint64_t> cgroup_v1_memory_room(const std::string& limit_in_bytes,
                                                   const std::string& usage_in_bytes);

}  // namespace kforge
