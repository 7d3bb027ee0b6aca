// Usable CPUs: the cgroup quota files as the kernel writes them, the
// /proc/self/cgroup lines of both hierarchies, and the affinity mask of a
// thread pinned to one CPU.
#include <catch2/catch.hpp>

#include <thread>

#include "runtime/device/host/host_cpus.hpp"
#include "tests/one_cpu_affinity.hpp"

using namespace kforge;

TEST_CASE("cgroup v2 cpu.max: a quota rounds up to whole CPUs, max is no limit") {
  CHECK(cgroup_v2_cpu_limit("200000 100000\n") == 2);
  CHECK(cgroup_v2_cpu_limit("150000 100000\n") == 2);
  CHECK(cgroup_v2_cpu_limit("50000 100000\n") == 1);
  CHECK(cgroup_v2_cpu_limit("100000 100000") == 1);
  CHECK_FALSE(cgroup_v2_cpu_limit("max 100000\n"));
  CHECK_FALSE(cgroup_v2_cpu_limit(""));
  CHECK_FALSE(cgroup_v2_cpu_limit("garbage"));
}

TEST_CASE("cgroup v1 cfs quota: -1 is no limit") {
  CHECK(cgroup_v1_cpu_limit("400000\n", "100000\n") == 4);
  CHECK(cgroup_v1_cpu_limit("25000", "100000") == 1);
  CHECK_FALSE(cgroup_v1_cpu_limit("-1\n", "100000\n"));
  CHECK_FALSE(cgroup_v1_cpu_limit("", "100000"));
  CHECK_FALSE(cgroup_v1_cpu_limit("100000", "0"));
}

TEST_CASE("/proc/self/cgroup: the v2 entry and a v1 controller's line") {
  const std::string hybrid = "9:name=systemd:/\n4:memory:/a/b\n2:cpu,cpuacct:/ci/job7\n0::/user.slice\n";
  CHECK(cgroup_path(hybrid, "cpu") == std::string("/ci/job7"));
  CHECK(cgroup_path(hybrid, "cpuacct") == std::string("/ci/job7"));
  CHECK(cgroup_path(hybrid, "memory") == std::string("/a/b"));
  CHECK(cgroup_path(hybrid, "") == std::string("/user.slice"));
  CHECK_FALSE(cgroup_path(hybrid, "cpuset"));
  CHECK_FALSE(cgroup_path("2:cpu:/x\n", ""));
  CHECK(cgroup_path("0::/\n", "") == std::string("/"));
}

TEST_CASE("a thread pinned to one CPU may use one") {
  const int all = usable_cpus();
  CHECK(all >= 1);
  CHECK(all <= static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  int pinned = 0;
  {
    test::OneCpuAffinity one;
    REQUIRE(one.pinned());
    CHECK(all <= one.cpus_before());
    pinned = usable_cpus();
  }
  CHECK(pinned == 1);
  CHECK(usable_cpus() == all);
}
