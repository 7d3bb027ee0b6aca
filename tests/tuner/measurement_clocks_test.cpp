// Clocks beside timings on PoCL: measure() and interleaved re-timing read a
// clock reader after each timed launch, the device's own (the host CPU's for
// PoCL) or any other, here NVML from a fake libnvidia-ml with a script of
// throttled and unthrottled readings.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "runtime/device/opencl/opencl_backend.hpp"
#include "runtime/profiling/nvml_api.hpp"
#include "tests/test_util.hpp"
#include "tuner/measure/measurement.hpp"

using namespace kforge;

namespace {

struct PoclKernel {
  std::unique_ptr<Device> device;
  std::unique_ptr<Kernel> kernel;
  std::unique_ptr<Buffer> buffer;
  std::vector<KernelArg> args;
  LaunchGeometry geometry;
};

PoclKernel scale_kernel() {
  PoclKernel k;
  k.device = open_opencl_device(0).value();
  const std::string source =
      "__kernel void scale(__global float* x, int n) { int i = get_global_id(0); if (i < n) x[i] *= 2.0f; }";
  auto compiled = k.device->compiler().compile(source, "scale", "").value();
  k.kernel = k.device->load(compiled).value();
  k.buffer = k.device->allocate(1024 * sizeof(float)).value();
  k.args = {KernelArg::of(*k.buffer), KernelArg::of(std::int32_t{1024})};
  k.geometry.block = {64, 1, 1};
  k.geometry.grid = {16, 1, 1};
  return k;
}

MeasurementProtocol fixed_reps(int reps) {
  MeasurementProtocol p;
  p.warmup = 1;
  p.min_reps = reps;
  p.max_reps = reps;
  p.ci_rel_width = 0;  // a fixed count, never stopped on precision or time
  p.budget_ms = 1e9;
  p.flush_cache = false;
  return p;
}

}  // namespace

TEST_CASE("measure on PoCL records the host CPU clock after every sample", "[clocks][opencl]") {
  PoclKernel k = scale_kernel();
  ClockReader* own = k.device->clock_reader();
  REQUIRE(own != nullptr);  // PoCL is a CPU device: the host's clock
  auto s = measure(*k.device, *k.kernel, k.args, k.geometry, fixed_reps(6));
  REQUIRE(s.ok());
  CHECK(s->count == 6);
  CHECK(s->clocks.source == own->source());
  REQUIRE(s->clocks.core_mhz.size() == 6);
  for (double mhz : s->clocks.core_mhz) {
    CHECK(mhz > 100);
    CHECK(mhz < 10000);
  }
  CHECK(s->clocks.throttled_count() == 0);  // never guessed on a CPU
  CHECK_FALSE(s->clocks.reasons_known);
  CHECK(s->clocks.note().empty());
}

TEST_CASE("measure with an NVML reader flags throttled samples and keeps them in the median",
          "[clocks][opencl]") {
  const test::ScopedScriptFile script("KFORGE_FAKE_NVML_SCRIPT",
                                      "device GPU-0c1d2e3f 00000000:17:00.0\n"
                                      "sample 1980 2619 60 300000 0\n"
                                      "sample 1980 2619 61 300000 1\n"     // idle: not throttled
                                      "sample 1600 2619 84 700000 20\n"    // SW thermal
                                      "sample 1980 2619 70 300000 0\n"
                                      "sample 1100 2619 91 700000 44\n"    // SW power cap + HW thermal
                                      "sample 1980 2619 65 300000 10\n");  // sync boost: not throttled
  auto reader = nvml::open_nvml_clock_reader("GPU-0c1d2e3f", KFORGE_FAKE_NVML);
  REQUIRE(reader.ok());
  PoclKernel k = scale_kernel();

  auto s = measure(*k.device, *k.kernel, k.args, k.geometry, fixed_reps(6), 0, {}, reader->get());
  REQUIRE(s.ok());
  CHECK(s->count == 6);  // throttled samples are not dropped
  CHECK(s->samples_ms.size() == 6);
  const ClockRecord& c = s->clocks;
  CHECK(c.source == "nvml");
  CHECK(c.core_mhz == std::vector<double>{1980, 1980, 1600, 1980, 1100, 1980});
  CHECK(c.throttled == std::vector<bool>{false, false, true, false, true, false});
  CHECK(c.throttled_count() == 2);
  CHECK(c.reasons ==
        std::set<std::string>{"gpu_idle", "sw_thermal_slowdown", "sw_power_cap", "hw_thermal_slowdown", "sync_boost"});
  CHECK(c.temperature_c_max == 91);
  CHECK(c.power_w_max == Approx(700.0));
  CHECK(c.memory_mhz_min == 2619);
  CHECK(c.note() == "2 of 6 samples throttled (hw_thermal_slowdown, sw_power_cap, sw_thermal_slowdown); "
                    "the median includes them");
  const auto j = c.to_json();
  CHECK(j["summary"]["throttled_samples"] == 2);
  CHECK(j["summary"]["core_mhz_min"] == 1100.0);
  CHECK(j["summary"]["core_mhz_median"] == 1980.0);
  CHECK(j["summary"]["core_mhz_max"] == 1980.0);
  CHECK(j["note"] == c.note());
}

TEST_CASE("interleaved finalists each get the clocks read after their own launches", "[clocks][opencl]") {
  const test::ScopedScriptFile script("KFORGE_FAKE_NVML_SCRIPT",
                                      "device GPU-0c1d2e3f 00000000:17:00.0\n"
                                      // Rounds A B, B A, A B (each starts one later).
                                      "sample 1000 2619 60 300000 0\n"     // A
                                      "sample 2000 2619 60 300000 8\n"     // B, HW slowdown
                                      "sample 2001 2619 60 300000 0\n"     // B
                                      "sample 1001 2619 60 300000 0\n"     // A
                                      "sample 1002 2619 60 300000 0\n"     // A
                                      "sample 2002 2619 60 300000 0\n");   // B
  auto reader = nvml::open_nvml_clock_reader("00000000:17:00.0", KFORGE_FAKE_NVML);
  REQUIRE(reader.ok());
  PoclKernel k = scale_kernel();
  std::vector<Finalist> finalists = {{k.kernel.get(), &k.args, k.geometry}, {k.kernel.get(), &k.args, k.geometry}};
  MeasurementProtocol p = fixed_reps(2);
  p.finalist_rounds = 3;
  auto s = measure_interleaved(*k.device, finalists, p, reader->get());
  REQUIRE(s.ok());
  REQUIRE(s->size() == 2);
  CHECK((*s)[0].clocks.core_mhz == std::vector<double>{1000, 1001, 1002});
  CHECK((*s)[1].clocks.core_mhz == std::vector<double>{2000, 2001, 2002});
  CHECK((*s)[0].clocks.throttled_count() == 0);
  CHECK((*s)[1].clocks.throttled == std::vector<bool>{true, false, false});
}
