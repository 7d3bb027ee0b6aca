// On a real NVIDIA GPU: the CUDA device reads its clocks through the real
// NVML (libnvidia-ml.so.1). Without a CUDA device or without NVML the test
// prints "SKIPPED: <why>", which ctest reports as skipped.
#include <catch2/catch.hpp>

#include "runtime/device/cuda/cuda_backend.hpp"
#include "runtime/device/device_registry.hpp"
#include "runtime/profiling/nvml_api.hpp"

using namespace kforge;

TEST_CASE("a CUDA device reads its clocks through NVML", "[gpu][clocks]") {
  if (list_cuda_devices().empty()) {
    const std::string why = cuda_unavailable_reason();
    WARN("SKIPPED: no CUDA device: " << (why.empty() ? "the driver reports none" : why));
    return;
  }
  if (auto nvml = nvml::NvmlApi::load(); !nvml.ok()) {
    WARN("SKIPPED: no NVML: " << nvml.error().message);
    return;
  }
  auto dev = open_device("cuda:0").value();
  ClockReader* reader = dev->clock_reader();
  REQUIRE(reader != nullptr);  // NVML loads and the GPU's UUID is known to it
  CHECK(reader->source() == "nvml");
  auto s = reader->read();
  REQUIRE(s.ok());
  INFO("SM " << s->core_mhz << " MHz, memory " << s->memory_mhz << " MHz, " << s->temperature_c << " C, "
             << s->power_w << " W, reasons 0x" << std::hex << s->reasons_mask);
  CHECK(s->core_mhz > 0);
  CHECK(s->memory_mhz > 0);
  CHECK(s->reasons_known);
  CHECK(s->throttled == ((s->reasons_mask & nvml::kThrottlingReasons) != 0));
  // The count of processes on the GPU is read (inside a container NVML may
  // not see this one, so no lower bound above zero).
  INFO("processes with a compute context: " << s->gpu_processes);
  CHECK(s->gpu_processes >= 0);
}
