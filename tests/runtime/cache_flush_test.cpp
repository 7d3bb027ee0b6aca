// The flush size rule: every cache between memory and the cores is evicted.
#include <catch2/catch.hpp>

#include "runtime/device/cache_flush.hpp"
#include "runtime/device/target.hpp"

using namespace kforge;

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

DeviceInfo device(const std::string& backend, const std::string& vendor, const std::string& type,
                  const std::string& arch, std::int64_t cache_bytes) {
  DeviceInfo d;
  d.backend = backend;
  d.vendor = vendor;
  d.device_type = parse_device_type(type);
  d.arch = arch;
  d.cache_bytes = cache_bytes;
  d.global_mem_bytes = std::int64_t{64} << 30;
  return d;
}

}  // namespace

TEST_CASE("a flush writes twice the largest cache between memory and the cores, at least 32 MiB", "[unit]") {
  // The L2 the driver reports is the last level on NVIDIA GPUs.
  CHECK(cache_flush_bytes(device("cuda", "NVIDIA", "gpu", "sm_90", 50 * kMiB)) == 100 * kMiB);
  // MI250X: an 8 MiB L2 per GCD and nothing behind it.
  CHECK(cache_flush_bytes(device("hip", "AMD", "gpu", "gfx90a", 8 * kMiB)) == 32 * kMiB);
  // MI300X: the driver reports a 4 MiB L2; the 256 MiB Infinity Cache sits behind it.
  CHECK(memory_side_cache_bytes(device("hip", "AMD", "gpu", "gfx942", 4 * kMiB)) == 256 * kMiB);
  CHECK(cache_flush_bytes(device("hip", "AMD", "gpu", "gfx942", 4 * kMiB)) == 512 * kMiB);
  CHECK(cache_flush_bytes(device("hip", "AMD", "gpu", "gfx942:sramecc+:xnack-", 4 * kMiB)) == 512 * kMiB);
  // The same GPU through ROCm's OpenCL.
  CHECK(cache_flush_bytes(device("opencl", "Advanced Micro Devices, Inc.", "gpu", "gfx942", 4 * kMiB)) ==
        512 * kMiB);
  // An AMD GPU the table does not know: assumed to have the largest Infinity Cache.
  CHECK(cache_flush_bytes(device("hip", "AMD", "gpu", "gfx1100", 6 * kMiB)) == 512 * kMiB);
  // An AMD CPU under PoCL reports its own last-level cache (the L3).
  CHECK(memory_side_cache_bytes(device("opencl", "AuthenticAMD", "cpu", "x86_64-znver4", 32 * kMiB)) == 0);
  CHECK(cache_flush_bytes(device("opencl", "AuthenticAMD", "cpu", "x86_64-znver4", 32 * kMiB)) == 64 * kMiB);
  // A device that reports no cache still gets the floor.
  CHECK(cache_flush_bytes(device("opencl", "Intel(R) Corporation", "gpu", "Arc", 0)) == 32 * kMiB);
}

TEST_CASE("a flush stays within the allocation limit and a quarter of the device's memory", "[unit]") {
  DeviceInfo mi300 = device("hip", "AMD", "gpu", "gfx942", 4 * kMiB);
  CHECK(cache_flush_bytes(mi300, 100 * kMiB + 15) == 100 * kMiB);  // whole 16-byte units
  mi300.global_mem_bytes = std::int64_t{1} << 30;
  CHECK(cache_flush_bytes(mi300) == 256 * kMiB);
  for (std::size_t bytes : {cache_flush_bytes(mi300, 31), cache_flush_bytes(mi300, 100 * kMiB + 12)}) {
    CHECK(bytes % 16 == 0);
  }
}

TEST_CASE("the architecture table marks the GPUs with a memory-side cache", "[unit]") {
  for (const std::string arch : {"gfx940", "gfx941", "gfx942"}) {
    INFO(arch);
    REQUIRE(arch_resources("hip", arch));
    CHECK(arch_resources("hip", arch)->memory_side_cache_bytes == std::int64_t{256} << 20);
  }
  for (const std::string arch : {"gfx906", "gfx908", "gfx90a"}) {
    INFO(arch);
    CHECK(arch_resources("hip", arch)->memory_side_cache_bytes == 0);
  }
  for (const auto& arch : known_archs("cuda")) {
    INFO(arch);
    CHECK(arch_resources("cuda", arch)->memory_side_cache_bytes == 0);
  }
}
