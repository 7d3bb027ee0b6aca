// A foreign kernel's workspaces (runtime/device/kernel_workspaces.hpp) on the
// CUDA and HIP devices over the fake driver: made at the first launch, one
// set per stream, zeroed once, passed in their argument slots, checked zero
// after a launch that is waited for, and all or none.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

#include "runtime/binaries/code_object_reader.hpp"
#include "runtime/device/cuda/cuda_backend.hpp"
#include "runtime/device/foreign_memory.hpp"
#include "runtime/device/hip/hip_backend.hpp"
#include "runtime/kinds/triton_binary.hpp"
#include "tests/runtime/fake_gpu_driver.hpp"

using namespace kforge;
using test::FakeGpu;
using test::FakeOp;

namespace {

const std::filesystem::path kData = std::filesystem::path(KFORGE_TEST_DATA_DIR) / "triton";

/// Triton's scale(X, Y, n, alpha) with `map` and `workspaces` in its ABI.
CompiledKernel scale_with(const std::string& folder, std::vector<AbiArgument> map,
                          std::vector<AbiWorkspace> workspaces) {
  std::ifstream record_file(kData / folder / "scale.json");
  const auto record = nlohmann::json::parse(record_file);
  std::ifstream in(kData / folder / record["binary"].get<std::string>(), std::ios::binary);
  auto k = triton_compiled_kernel(record, {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()});
  REQUIRE(k.ok());
  LaunchAbi abi = *k->abi;
  abi.argument_map = std::move(map);
  abi.workspaces = std::move(workspaces);
  k->abi = std::make_shared<const LaunchAbi>(std::move(abi));
  return std::move(k).value();
}

/// X from the caller, Y the zeroed workspace "tickets" of 1000 int32, n = 1000, alpha from the caller.
CompiledKernel scale_with_tickets(const std::string& folder) {
  return scale_with(folder, {{0, 0}, {-1, 0, 0}, {-1, 1000}, {1, 0}}, {{"tickets", 1000, 4, true}});
}

std::uintptr_t pointer_param(const std::vector<std::uint8_t>& bytes) {
  std::uintptr_t p = 0;
  std::memcpy(&p, bytes.data(), sizeof p);
  return p;
}

bool all_zero(std::uintptr_t address, std::size_t bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(address);
  return std::all_of(p, p + bytes, [](unsigned char b) { return b == 0; });
}

LaunchGeometry geometry(std::int64_t block_threads) {
  LaunchGeometry g;
  g.block = {block_threads, 1, 1};
  g.grid = {4, 1, 1};
  return g;
}

/// The workspace cycle on `device`: `block` threads per block.
void check_tickets_cycle(Device& device, std::int64_t block) {
  auto kernel = device.load(scale_with_tickets(block == 128 ? "cuda-sm_90a" : "hip-gfx942"));
  REQUIRE(kernel.ok());
  auto x = std::move(device.allocate(1000 * sizeof(float))).value();
  const std::vector<KernelArg> args = {KernelArg::of(*x), KernelArg::of(2.0f)};
  auto& fake = FakeGpu::get();
  const auto allocations_before = fake.allocations.size();

  // First launch: the workspace is made and zeroed, and passed as Y.
  REQUIRE(device.launch(**kernel, args, geometry(block)).ok());
  REQUIRE(fake.allocations.size() == allocations_before + 1);
  const std::uintptr_t tickets = pointer_param(fake.launches.at(0).params.at(1));
  REQUIRE(fake.allocations.count(tickets) == 1);
  CHECK(fake.allocations.at(tickets) == 4000);
  CHECK(all_zero(tickets, 4000));
  CHECK(fake.calls[FakeOp::kMemset] == 1);
  CHECK(pointer_param(fake.launches.at(0).params.at(0)) != tickets);

  // Later launches on the stream, waited for or enqueued, keep it: zeroed once.
  REQUIRE(device.launch(**kernel, args, geometry(block)).ok());
  REQUIRE(device.enqueue(**kernel, args, geometry(block)).ok());
  REQUIRE(device.synchronize().ok());
  CHECK(pointer_param(fake.launches.at(1).params.at(1)) == tickets);
  CHECK(pointer_param(fake.launches.at(2).params.at(1)) == tickets);
  CHECK(fake.calls[FakeOp::kMemset] == 1);

  // Another stream gets its own.
  ForeignMemory* foreign = foreign_memory(device);
  REQUIRE(foreign != nullptr);
  foreign->use_caller_stream(0x5eed);
  REQUIRE(device.launch(**kernel, args, geometry(block)).ok());
  foreign->use_own_stream();
  const std::uintptr_t theirs = pointer_param(fake.launches.back().params.at(1));
  CHECK(theirs != tickets);
  CHECK(fake.allocations.count(theirs) == 1);
  CHECK(fake.calls[FakeOp::kMemset] == 2);

  // A kernel that leaves a ticket behind fails the launch, naming the
  // workspace and the byte; the workspace is zeroed again for the next.
  reinterpret_cast<unsigned char*>(tickets)[5] = 0x01;
  auto dirty = device.launch(**kernel, args, geometry(block));
  REQUIRE_FALSE(dirty.ok());
  CHECK(dirty.error().code == ErrorCode::kLaunch);
  CHECK(dirty.error().message == "scale left workspace tickets non-zero: byte 5 of 4000 is 0x01");
  CHECK(all_zero(tickets, 4000));
  CHECK(device.launch(**kernel, args, geometry(block)).ok());

  // The kernel's end frees its workspaces.
  kernel->reset();
  CHECK(fake.allocations.count(tickets) == 0);
  CHECK(fake.allocations.count(theirs) == 0);
}

}  // namespace

TEST_CASE("The CUDA device makes a kernel's workspaces at its first launch, one set per stream", "[triton]") {
  FakeGpu::get().reset();
  auto device = open_cuda_device(test::fake_cuda_driver(), 0);
  REQUIRE(device.ok());
  check_tickets_cycle(**device, 128);
}

TEST_CASE("The HIP device makes a kernel's workspaces at its first launch, one set per stream", "[triton]") {
  if (!code_object_reader_available()) {
    WARN("SKIPPED: kforge built without LLVM reads no AMDGPU code objects");
    return;
  }
  FakeGpu::get().reset();
  auto device = open_hip_device(test::fake_hip_runtime(), 0);
  REQUIRE(device.ok());
  check_tickets_cycle(**device, 256);
}

TEST_CASE("A failure while making the second workspace keeps none of them", "[triton]") {
  FakeGpu::get().reset();
  auto device = open_cuda_device(test::fake_cuda_driver(), 0);
  REQUIRE(device.ok());
  // X the workspace "partials" (not zeroed), Y the zeroed "tickets", alpha from the caller.
  auto kernel = (*device)->load(scale_with("cuda-sm_90a", {{-1, 0, 0}, {-1, 0, 1}, {-1, 256}, {0, 0}},
                                           {{"partials", 256, 4, false}, {"tickets", 4, 4, true}}));
  REQUIRE(kernel.ok());
  auto& fake = FakeGpu::get();
  const auto allocations_before = fake.allocations.size();
  const std::vector<KernelArg> args = {KernelArg::of(2.0f)};

  fake.fail_next(FakeOp::kMemset, 2);  // zeroing tickets, once partials is made
  auto failed = (*device)->launch(**kernel, args, geometry(128));
  REQUIRE_FALSE(failed.ok());
  CHECK_THAT(failed.error().message, Catch::Contains("zeroing workspace tickets"));
  CHECK(fake.calls[FakeOp::kAllocate] >= 2);
  CHECK(fake.allocations.size() == allocations_before);  // partials was not kept
  CHECK(fake.launches.empty());

  REQUIRE((*device)->launch(**kernel, args, geometry(128)).ok());
  const auto& l = fake.launches.at(0);
  const std::uintptr_t partials = pointer_param(l.params.at(0)), tickets = pointer_param(l.params.at(1));
  CHECK(fake.allocations.at(partials) == 1024);
  CHECK(fake.allocations.at(tickets) == 16);
  CHECK(fake.allocations.size() == allocations_before + 2);
}
