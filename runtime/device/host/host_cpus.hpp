// How many CPUs this process may use: the online CPUs, narrowed by its CPU
// affinity (taskset, a cpuset) and by a cgroup CPU quota (a container's
// --cpus). std::thread::hardware_concurrency counts every online CPU, so a
// tuner pinned to one core of two, or a CI container allowed 2 CPUs of 64,
// sized its compile pool for all of them and oversubscribed what it had.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kforge {

/// CPUs this process may run on at once: min(online, affinity, cgroup
/// quota rounded up), at least 1.
int usable_cpus();

/// The CPU share a cgroup v2 `cpu.max` file ("QUOTA PERIOD", QUOTA "max"
/// for none) allows, rounded up; nullopt where it sets no limit or does not
/// parse.
std::optional<int> cgroup_v2_cpu_limit(const std::string& cpu_max);

/// The same from cgroup v1's `cpu.cfs_quota_us` (-1 for none) and
/// `cpu.cfs_period_us` contents.
std::optional<int> cgroup_v1_cpu_limit(const std::string& quota_us, const std::string& period_us);

/// The cgroup path of `controller` in a /proc/self/cgroup text: the v2 entry
/// ("0::PATH") for an empty controller, else the v1 line whose controller
/// list holds it ("4:cpu,cpuacct:PATH"); nullopt where absent.
std::optional<std::string> cgroup_path(const std::string& proc_self_cgroup, const std::string& controller);

/// A cgroup path and each of its ancestors, deepest first ("/a/b", "/a",
/// ""): a limit set on a parent applies to every child.
std::vector<std::string> cgroup_path_with_ancestors(std::string path);

/// The host CPU's model from /proc/cpuinfo ("model name"), the machine
/// name (uname) where it has none: what every backend's fingerprint records.
const std::string& host_cpu_model();

/// The whole text of a small /proc or /sys file; std::nullopt when it cannot
/// be read. Shared by the CPU and the memory readings of the host.
std::optional<std::string> read_host_file(const std::string& path);

}  // namespace kforge
