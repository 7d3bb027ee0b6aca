// Host memory available to the process: /proc/meminfo and cgroup limits, parsed.
#include "runtime/device/host/host_memory.hpp"

#include <catch2/catch.hpp>

using namespace kforge;

TEST_CASE("MemAvailable is read from /proc/meminfo text", "[host_memory]") {
  CHECK(
      meminfo_available_bytes("MemTotal:       16318588 kB\nMemFree:  1 kB\nMemAvailable:    5242880 kB\n") ==
      std::uint64_t{5242880} * 1024);
  CHECK_FALSE(meminfo_available_bytes("MemTotal: 16318588 kB\n").has_value());
  CHECK_FALSE(meminfo_available_bytes("MemAvailable: lots\n").has_value());
}

TEST_CASE("cgroup memory limits leave their limit less usage", "[host_memory]") {
  CHECK(cgroup_v2_memory_room("1073741824\n", "268435456\n") == std::uint64_t{805306368});
  CHECK(cgroup_v2_memory_room("1000\n", "2000\n") == std::uint64_t{0});
  CHECK_FALSE(cgroup_v2_memory_room("max\n", "268435456\n").has_value());
  CHECK_FALSE(cgroup_v2_memory_room("", "1").has_value());
  CHECK(cgroup_v1_memory_room("2147483648\n", "1073741824\n") == std::uint64_t{1073741824});
  CHECK_FALSE(cgroup_v1_memory_room("9223372036854771712\n", "1073741824\n").has_value());
}

TEST_CASE("this host reports some available memory", "[host_memory]") {
  const auto m = host_available_memory();
  REQUIRE(m.has_value());
  CHECK(m->available_bytes > 0);
  CHECK_FALSE(m->source.empty());
}
