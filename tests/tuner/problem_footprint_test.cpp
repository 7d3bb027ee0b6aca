// The memory a tuning run needs against the device and the host: refused
// before anything is allocated, with needed and available in the message.
#include "tuner/measure/problem_footprint.hpp"

#include <catch2/catch.hpp>

using namespace kforge;

namespace {

Problem gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
  Problem p{"gemm", {{"M", m}, {"N", n}, {"K", k}}, Dtype::kF32, Layout{}, {}, {}};
  auto normalized = find_operator("gemm")->normalize(p);
  REQUIRE(normalized.ok());
  return *normalized;
}

DeviceInfo gpu(std::int64_t global, std::int64_t max_alloc) {
  DeviceInfo d;
  d.selector = "opencl:0";
  d.name = "Test GPU";
  d.device_type = DeviceType::kGpu;
  d.global_mem_bytes = global;
  d.max_alloc_bytes = max_alloc;
  return d;
}

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

}  // namespace

TEST_CASE("a gemm's footprint: both runs' tensors, references and copies", "[footprint]") {
  const ProblemFootprint f = problem_footprint(*find_operator("gemm"), gemm(128, 64, 32));
  const std::uint64_t a = 128 * 32 * 4, b = 32 * 64 * 4, c = 128 * 64 * 4, bias = 64 * 4;
  CHECK(f.device_bytes == 2 * (a + b + c + bias));
  CHECK(f.largest_tensor == "C");
  CHECK(f.largest_tensor_bytes == c);
  // Per run: tensors, 16 bytes of reference and 4 of read-back per output
  // element; once: 16 bytes per input element.
  CHECK(f.host_bytes == 2 * (a + b + c + bias + 128 * 64 * 20) + 16 * (128 * 32 + 32 * 64 + 64));
}

TEST_CASE("M=N=K=200000 f32 is refused with the numbers, whatever the memory", "[footprint]") {
  const Problem p = gemm(200000, 200000, 200000);
  const ProblemFootprint f = problem_footprint(*find_operator("gemm"), p);
  CHECK(f.largest_tensor_bytes == 160'000'000'000ull);
  SECTION("one allocation too large") {
    auto s = check_problem_fits(f, p, gpu(80 * kGiB, 20 * kGiB), std::nullopt);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == ErrorCode::kBadInput);
    CHECK(s.error().message ==
          "problem " + p.key() +
              ": tensor A needs 149.0 GiB of device memory in one buffer; opencl:0 (Test GPU) "
              "allows at most "
              "20.0 GiB per allocation");
  }
  SECTION("all tensors more than the device holds") {
    auto s = check_problem_fits(f, p, gpu(400 * kGiB, 400 * kGiB), std::nullopt);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message ==
          "problem " + p.key() +
              ": needs 894.1 GiB of device memory (every tensor, for two validation runs); "
              "opencl:0 (Test GPU) has 400.0 GiB");
  }
  SECTION("more than the host has") {
    auto s = check_problem_fits(f, p, gpu(2048 * kGiB, 2048 * kGiB),
                                HostMemory{64 * kGiB, "MemAvailable in /proc/meminfo"});
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.error().message, Catch::Contains("of host memory (inputs, double-precision references"));
    CHECK_THAT(s.error().message,
               Catch::EndsWith("; 64.0 GiB are available (MemAvailable in /proc/meminfo)"));
  }
}

TEST_CASE("a CPU device's buffers count against the host's memory", "[footprint]") {
  const Problem p = gemm(4096, 4096, 4096);
  const ProblemFootprint f = problem_footprint(*find_operator("gemm"), p);
  DeviceInfo cpu = gpu(64 * kGiB, 16 * kGiB);
  const HostMemory host{f.host_bytes + f.device_bytes / 2, "the cgroup limit (memory.max)"};
  CHECK(check_problem_fits(f, p, cpu, host).ok());  // a GPU's buffers are its own
  cpu.device_type = DeviceType::kCpu;
  auto s = check_problem_fits(f, p, cpu, host);
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.error().message, Catch::Contains("and the CPU device's buffers); "));
  CHECK_THAT(s.error().message, Catch::EndsWith("are available (the cgroup limit (memory.max))"));
}

TEST_CASE("an unknown limit is not checked, and sizes print in GiB, MiB or bytes", "[footprint]") {
  const Problem p = gemm(200000, 200000, 200000);
  CHECK(check_problem_fits(problem_footprint(*find_operator("gemm"), p), p, gpu(0, 0), std::nullopt).ok());
  CHECK(memory_size(3 * (std::uint64_t{1} << 29)) == "1.5 GiB");
  CHECK(memory_size(12 * (std::uint64_t{1} << 20)) == "12.0 MiB");
  CHECK(memory_size(512) == "512 bytes");
}
