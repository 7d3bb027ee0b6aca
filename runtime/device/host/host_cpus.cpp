// Usable CPUs from the affinity mask and the cgroup CPU quota (host_cpus.hpp).
#include "runtime/device/host/host_cpus.hpp"

#include <sched.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace kforge {
namespace {

std::optional<double> parse_number(const std::string& text) {
  std::istringstream in(text);
  double v = 0;
  if (!(in >> v)) return std::nullopt;
  return v;
}

std::optional<int> cpus_of(double quota, double period) {
  if (quota <= 0 || period <= 0) return std::nullopt;
  return std::max(1, static_cast<int>(std::ceil(quota / period - 1e-9)));
}

/// The tightest quota on the process's cgroup or any ancestor: a limit set
/// on a parent applies to every child.
std::optional<int> cgroup_cpu_limit() {
  const auto self = read_host_file("/proc/self/cgroup");
  if (!self) return std::nullopt;
  std::optional<int> limit;
  const auto tighten = [&limit](std::optional<int> l) {
    if (l) limit = limit ? std::min(*limit, *l) : *l;
  };
  if (const auto v2 = cgroup_path(*self, "")) {
    for (const char* mount : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
      for (const std::string& dir : cgroup_path_with_ancestors(*v2)) {
        if (const auto max = read_host_file(std::string(mount) + dir + "/cpu.max"))
          tighten(cgroup_v2_cpu_limit(*max));
      }
    }
  }
  if (const auto v1 = cgroup_path(*self, "cpu")) {
    for (const char* mount : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"}) {
      for (const std::string& dir : cgroup_path_with_ancestors(*v1)) {
        const std::string base = std::string(mount) + dir + "/cpu.cfs_";
        const auto quota = read_host_file(base + "quota_us"), period = read_host_file(base + "period_us");
        if (quota && period) tighten(cgroup_v1_cpu_limit(*quota, *period));
      }
    }
  }
  return limit;
}

}  // namespace

std::optional<int> cgroup_v2_cpu_limit(const std::string& cpu_max) {
  std::istringstream in(cpu_max);
  std::string quota, period;
  if (!(in >> quota >> period) || quota == "max") return std::nullopt;
  const auto q = parse_number(quota), p = parse_number(period);
  if (!q || !p) return std::nullopt;
  return cpus_of(*q, *p);
}

std::optional<int> cgroup_v1_cpu_limit(const std::string& quota_us, const std::string& period_us) {
  const auto q = parse_number(quota_us), p = parse_number(period_us);
  if (!q || !p) return std::nullopt;
  return cpus_of(*q, *p);
}

std::optional<std::string> cgroup_path(const std::string& proc_self_cgroup, const std::string& controller) {
  std::istringstream in(proc_self_cgroup);
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t a = line.find(':');
    const std::size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string list = line.substr(a + 1, b - a - 1);
    bool match = false;
    if (controller.empty()) {
      match = line.compare(0, a, "0") == 0 && list.empty();
    } else {
      std::istringstream names(list);
      std::string name;
      while (std::getline(names, name, ',')) match = match || name == controller;
    }
    if (match) return line.substr(b + 1);
  }
  return std::nullopt;
}

std::vector<std::string> cgroup_path_with_ancestors(std::string path) {
  std::vector<std::string> out;
  while (!path.empty() && path.back() == '/') path.pop_back();
  for (;;) {
    out.push_back(path);
    const std::size_t slash = path.rfind('/');
    if (path.empty() || slash == std::string::npos) break;
    path.resize(slash);
  }
  return out;
}

int usable_cpus() {
  int cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0) cpus = std::min(cpus, std::max(1, CPU_COUNT(&mask)));
  if (const auto quota = cgroup_cpu_limit()) cpus = std::min(cpus, *quota);
  return std::max(1, cpus);
}

std::optional<std::string> read_host_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::string& host_cpu_model() {
  static const std::string model = [] {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("model name", 0) != 0) continue;
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      const auto b = line.find_first_not_of(" \t", colon + 1);
      const auto e = line.find_last_not_of(" \t\r");
      if (b != std::string::npos) return line.substr(b, e - b + 1);
    }
    utsname u{};
    return uname(&u) == 0 ? std::string(u.machine) : std::string("unknown");
  }();
  return model;
}

}  // namespace kforge
