// Host memory available to this process (host_memory.hpp).
#include "runtime/device/host/host_memory.hpp"

#include <algorithm>
#include <sstream>

#include "runtime/device/host/host_cpus.hpp"

namespace kforge {
namespace {

std::optional<std::uint64_t> parse_bytes(const std::string& text) {
  std::istringstream in(text);
  std::uint64_t v = 0;
  if (!(in >> v)) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> room(std::optional<std::uint64_t> limit, std::optional<std::uint64_t> used) {
  if (!limit || !used) return std::nullopt;
  return *limit > *used ? *limit - *used : 0;
}

/// The least room under any cgroup limit on this process, with the file that sets it.
std::optional<HostMemory> cgroup_memory_room() {
  const auto self = read_host_file("/proc/self/cgroup");
  if (!self) return std::nullopt;
  std::optional<HostMemory> tightest;
  const auto tighten = [&tightest](std::optional<std::uint64_t> r, const char* file) {
    if (r && (!tightest || *r < tightest->available_bytes))
      tightest = HostMemory{*r, std::string("the cgroup limit (") + file + ")"};
  };
  if (const auto v2 = cgroup_path(*self, "")) {
    for (const std::string& dir : cgroup_path_with_ancestors(*v2)) {
      const std::string base = "/sys/fs/cgroup" + dir + "/memory.";
      const auto max = read_host_file(base + "max"), current = read_host_file(base + "current");
      if (max && current) tighten(cgroup_v2_memory_room(*max, *current), "memory.max");
    }
  }
  if (const auto v1 = cgroup_path(*self, "memory")) {
    for (const std::string& dir : cgroup_path_with_ancestors(*v1)) {
      const std::string base = "/sys/fs/cgroup/memory" + dir + "/memory.";
      const auto limit = read_host_file(base + "limit_in_bytes"), usage = read_host_file(base + "usage_in_bytes");
      if (limit && usage) tighten(cgroup_v1_memory_room(*limit, *usage), "memory.limit_in_bytes");
    }
  }
  return tightest;
}

}  // namespace

std::optional<std::uint64_t> meminfo_available_bytes(const std::string& meminfo) {
  std::istringstream in(meminfo);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    const auto kib = parse_bytes(line.substr(13));
    if (!kib) return std::nullopt;
    return *kib * 1024;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> cgroup_v2_memory_room(const std::string& memory_max,
                                                   const std::string& memory_current) {
  if (memory_max.rfind("max", 0) == 0) return std::nullopt;
  return room(parse_bytes(memory_max), parse_bytes(memory_current));
}

std::optional<std::uint64_t> cgroup_v1_memory_room(const std::string& limit_in_bytes,
                                                   const std::string& usage_in_bytes) {
  const auto limit = parse_bytes(limit_in_bytes);
  if (limit && *limit >= (std::uint64_t{1} << 62)) return std::nullopt;  // 0x7ffffffffffff000: unlimited
  return room(limit, parse_bytes(usage_in_bytes));
}

std::optional<HostMemory> host_available_memory() {
  std::optional<HostMemory> best;
  if (const auto text = read_host_file("/proc/meminfo")) {
    if (const auto available = meminfo_available_bytes(*text))
      best = HostMemory{*available, "MemAvailable in /proc/meminfo"};
  }
  if (auto cgroup = cgroup_memory_room();
      cgroup && (!best || cgroup->available_bytes < best->available_bytes)) {
    best = std::move(cgroup);
  }
  return best;
}

}  // namespace kforge
