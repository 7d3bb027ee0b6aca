// The device "auto" means for each of several processes on one node.
#include <catch2/catch.hpp>

#include "runtime/device/device_registry.hpp"

using namespace kforge;

namespace {

DeviceInfo device(const std::string& selector, DeviceType type, std::int64_t units = 8) {
  DeviceInfo d;
  d.selector = selector;
  d.backend = selector.substr(0, selector.find(':'));
  d.device_type = type;
  d.compute_units = units;
  return d;
}

}  // namespace

TEST_CASE("local ranks: four ranks on two GPUs take one GPU each, round robin", "[unit]") {
  // The same two GPUs seen through CUDA and through OpenCL, and the host CPU.
  const std::vector<DeviceInfo> devices = {
      device("opencl:0", DeviceType::kCpu, 16), device("opencl:1", DeviceType::kGpu, 132),
      device("opencl:2", DeviceType::kGpu, 132), device("cuda:0", DeviceType::kGpu, 132),
      device("cuda:1", DeviceType::kGpu, 132)};
  CHECK(local_rank_selector(devices, 0) == "cuda:0");
  CHECK(local_rank_selector(devices, 1) == "cuda:1");
  CHECK(local_rank_selector(devices, 2) == "cuda:0");
  CHECK(local_rank_selector(devices, 3) == "cuda:1");
}

TEST_CASE("local ranks: GPUs through OpenCL only are shared out the same way", "[unit]") {
  const std::vector<DeviceInfo> devices = {device("opencl:0", DeviceType::kGpu, 64),
                                           device("opencl:1", DeviceType::kCpu, 16),
                                           device("opencl:2", DeviceType::kGpu, 64)};
  CHECK(local_rank_selector(devices, 0) == "opencl:0");
  CHECK(local_rank_selector(devices, 1) == "opencl:2");
  CHECK(local_rank_selector(devices, 2) == "opencl:0");
}

TEST_CASE("local ranks: three ranks on a CPU-only node share its CPU device", "[unit]") {
  const std::vector<DeviceInfo> devices = {device("opencl:0", DeviceType::kCpu, 2)};
  for (int r = 0; r < 3; ++r) CHECK(local_rank_selector(devices, r) == "opencl:0");
  CHECK(local_rank_selector({}, 1) == "auto");  // nothing present: "auto" says so when opened
}
