// OpenCL device discovery, fingerprint, JSON round trip and selectors (needs PoCL or a driver).
#include <catch2/catch.hpp>

#include "runtime/device/device_registry.hpp"
#include "runtime/device/opencl/opencl_backend.hpp"

using namespace kforge;

namespace {

void require_fingerprint_filled(const DeviceInfo& d) {
  INFO("device " << d.selector << ": " << d.to_json().dump());
  CHECK(d.backend == "opencl");
  CHECK(d.selector.rfind("opencl:", 0) == 0);
  CHECK_FALSE(d.vendor.empty());
  CHECK_FALSE(d.name.empty());
  CHECK_FALSE(d.arch.empty());
  CHECK((d.device_type == DeviceType::kGpu || d.device_type == DeviceType::kCpu ||
         d.device_type == DeviceType::kAccelerator));
  CHECK(d.compute_units > 0);
  CHECK(d.clock_mhz > 0);
  CHECK(d.global_mem_bytes > 0);
  CHECK(d.local_mem_bytes > 0);
  CHECK(d.cache_bytes > 0);
  CHECK(d.cache_line_bytes > 0);
  CHECK(d.max_block_threads > 0);
  CHECK(d.simd_width > 0);
  CHECK_FALSE(d.driver_version.empty());
  CHECK_FALSE(d.runtime_version.empty());
  CHECK_FALSE(d.compiler.empty());
  CHECK_FALSE(d.compiler_version.empty());
  CHECK_FALSE(d.host_cpu.empty());
}

}  // namespace

TEST_CASE("OpenCL devices are listed with a full fingerprint", "[opencl][devices]") {
  const auto devices = list_opencl_devices();
  REQUIRE_FALSE(devices.empty());  // CI installs pocl-opencl-icd
  for (std::size_t i = 0; i < devices.size(); ++i) {
    CHECK(devices[i].selector == "opencl:" + std::to_string(i));
    require_fingerprint_filled(devices[i]);
  }
  // list_devices() covers every backend; today that is OpenCL alone.
  CHECK(list_devices().size() == devices.size());
}

TEST_CASE("PoCL devices name their CPU ISA and compiler", "[opencl][devices]") {
  for (const auto& d : list_opencl_devices()) {
    if (d.compiler != "pocl" || d.device_type != DeviceType::kCpu) continue;
    INFO(d.to_json().dump());
    // "x86_64-haswell": machine, dash, LLVM CPU name; never the raw device name.
    CHECK(d.arch.find('-') != std::string::npos);
    CHECK(d.arch.find("pthread") == std::string::npos);
    CHECK(d.arch.find(' ') == std::string::npos);
    CHECK(d.simd_width == 1);
    CHECK(d.compiler_version.find("LLVM") != std::string::npos);
  }
}

TEST_CASE("hardware_key is stable and covers hardware identity only", "[opencl][devices]") {
  const auto devices = list_opencl_devices();
  REQUIRE_FALSE(devices.empty());
  const DeviceInfo& d = devices[0];
  const std::string key = d.hardware_key();
  CHECK(key.size() == 16);
  CHECK(list_opencl_devices()[0].hardware_key() == key);

  DeviceInfo other = d;
  other.driver_version = "something newer";
  other.compiler_version = "9.9";
  other.selector = "opencl:7";
  CHECK(other.hardware_key() == key);
  other = d;
  other.compute_units += 1;
  CHECK(other.hardware_key() != key);
  other = d;
  other.arch += "x";
  CHECK(other.hardware_key() != key);
  other = d;
  other.global_mem_bytes += 1;
  // A CPU device's global memory is the host's current memory: not its identity.
  CHECK((other.hardware_key() == key) == (d.device_type == DeviceType::kCpu));
  other.device_type = d.device_type == DeviceType::kCpu ? DeviceType::kGpu : DeviceType::kCpu;
  CHECK(other.hardware_key() != key);
}

TEST_CASE("DeviceInfo JSON round trip keeps every field", "[opencl][devices]") {
  const auto devices = list_opencl_devices();
  REQUIRE_FALSE(devices.empty());
  const DeviceInfo d = devices[0];
  const nlohmann::json j = d.to_json();
  CHECK(j.at("hardware_key") == d.hardware_key());
  const DeviceInfo back = DeviceInfo::from_json(nlohmann::json::parse(j.dump()));
  CHECK(back.to_json() == j);

  // Every field, including ones PoCL reports as defaults, survives distinct values.
  DeviceInfo x;
  x.selector = "cuda:3";
  x.backend = "cuda";
  x.vendor = "NVIDIA Corporation";
  x.name = "NVIDIA H100";
  x.arch = "sm_90";
  x.device_type = DeviceType::kGpu;
  x.compute_units = 132;
  x.clock_mhz = 1980;
  x.global_mem_bytes = 85'000'000'000;
  x.local_mem_bytes = 49152;
  x.cache_bytes = 52'428'800;
  x.cache_line_bytes = 128;
  x.max_block_threads = 1024;
  x.simd_width = 32;
  x.driver_version = "550.54";
  x.runtime_version = "12.4";
  x.compiler = "nvrtc";
  x.compiler_version = "12.4.99";
  x.host_cpu = "Intel Xeon";
  const DeviceInfo y = DeviceInfo::from_json(x.to_json());
  CHECK(y.to_json() == x.to_json());
  CHECK(y.global_mem_bytes == 85'000'000'000);
  CHECK(y.host_cpu == "Intel Xeon");
  CHECK(y.limits().max_block_threads == 1024);
  CHECK(y.limits().local_mem_bytes == 49152);
  CHECK(y.limits().compute_units == 132);
  CHECK(y.limits().simd_width == 32);
}

TEST_CASE("device selectors", "[opencl][devices]") {
  const auto devices = list_devices();
  REQUIRE_FALSE(devices.empty());

  SECTION("auto opens the best device") {
    auto dev = open_device("auto");
    REQUIRE(dev.ok());
    CHECK(dev.value()->info().backend == "opencl");
    for (const auto& d : devices) {
      if (d.device_type == DeviceType::kGpu) CHECK(dev.value()->info().device_type == DeviceType::kGpu);
    }
  }
  SECTION("opencl:0 opens the first device") {
    auto dev = open_device("opencl:0");
    REQUIRE(dev.ok());
    CHECK(dev.value()->info().selector == "opencl:0");
    CHECK(dev.value()->info().hardware_key() == devices[0].hardware_key());
  }
  SECTION("out of range names how many exist") {
    auto dev = open_device("opencl:" + std::to_string(devices.size()));
    REQUIRE_FALSE(dev.ok());
    CHECK(dev.error().code == ErrorCode::kNotFound);
    CHECK_THAT(dev.error().message,
               Catch::Contains(std::to_string(devices.size()) + " OpenCL device"));
    CHECK_FALSE(open_opencl_device(devices.size()).ok());
  }
  SECTION("garbage is bad input") {
    for (const char* s : {"", "gpu", "opencl", "opencl:", "opencl:x", "opencl:-1", "opencl:0x",
                          "cuda0", "vulkan:0"}) {
      auto dev = open_device(s);
      INFO("selector '" << s << "'");
      REQUIRE_FALSE(dev.ok());
      CHECK(dev.error().code == ErrorCode::kBadInput);
      CHECK_THAT(dev.error().message,
                 Catch::StartsWith("no device matches '" + std::string(s) +
                                   "' (expected auto or opencl:N or cuda:N or hip:N or interpret:0, or a device's key, arch, "
                                   "backend:arch or part of its name; present: opencl:0 "));
    }
  }
}
