// Clock readers: NVML through a fake libnvidia-ml (fake_nvml.cpp) loaded with
// dlopen, reason decoding and the throttled flag; the host CPU reader on a
// crafted sysfs tree, a crafted /proc/cpuinfo and this machine.
#include <catch2/catch.hpp>

#include <chrono>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "runtime/profiling/cpu_clock_reader.hpp"
#include "runtime/profiling/nvml_api.hpp"
#include "tests/test_util.hpp"

using namespace kforge;

namespace {

/// Points the fake at a script for the life of the object.
struct FakeNvmlScript : test::ScopedScriptFile {
  explicit FakeNvmlScript(const std::string& text) : ScopedScriptFile("KFORGE_FAKE_NVML_SCRIPT", text) {}
};

const std::string kDevice = "device GPU-0c1d2e3f 00000000:17:00.0\n";

}  // namespace

TEST_CASE("NVML reason bits decode by name", "[clocks][unit]") {
  CHECK(nvml::reason_names(0).empty());
  CHECK(nvml::reason_names(0x1) == std::vector<std::string>{"gpu_idle"});
  CHECK(nvml::reason_names(0x24) == std::vector<std::string>{"sw_power_cap", "sw_thermal_slowdown"});
  CHECK(nvml::reason_names(0x1c8) ==
        std::vector<std::string>{"hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown",
                                 "display_clock_setting"});
  CHECK(nvml::reason_names(0x10 | 0x2) == std::vector<std::string>{"applications_clocks_setting", "sync_boost"});
  CHECK(nvml::reason_names(0x400) == std::vector<std::string>{"reason_0x400"});
}

TEST_CASE("the NVML reader reads clocks and flags throttling reasons only", "[clocks][unit]") {
  FakeNvmlScript script(kDevice +
                        "sample 1980 2619 45 350000 0\n"
                        "sample 1755 2619 88 699000 20\n"     // SW thermal slowdown
                        "sample 1410 2619 60 120000 11\n"     // idle + sync boost: not throttling
                        "sample 1200 2619 61 700000 4\n"      // SW power cap
                        "sample 1980 2619 50 300000 2\n"      // application clocks: not throttling
                        "sample 900 2619 95 400000 48\n");    // HW slowdown + HW thermal
  auto reader = nvml::open_nvml_clock_reader("GPU-0c1d2e3f", KFORGE_FAKE_NVML);
  REQUIRE(reader.ok());
  CHECK((*reader)->source() == "nvml");

  auto s = (*reader)->read();
  REQUIRE(s.ok());
  CHECK(s->core_mhz == 1980);
  CHECK(s->memory_mhz == 2619);
  CHECK(s->temperature_c == 45);
  CHECK(s->power_w == Approx(350.0));
  CHECK(s->reasons_known);
  CHECK(s->reasons.empty());
  CHECK_FALSE(s->throttled);

  s = (*reader)->read();
  CHECK(s->core_mhz == 1755);
  CHECK(s->reasons_mask == 0x20);
  CHECK(s->reasons == std::vector<std::string>{"sw_thermal_slowdown"});
  CHECK(s->throttled);

  s = (*reader)->read();
  CHECK(s->reasons == std::vector<std::string>{"gpu_idle", "sync_boost"});
  CHECK_FALSE(s->throttled);

  s = (*reader)->read();
  CHECK(s->reasons == std::vector<std::string>{"sw_power_cap"});
  CHECK(s->throttled);

  s = (*reader)->read();
  CHECK(s->reasons == std::vector<std::string>{"applications_clocks_setting"});
  CHECK_FALSE(s->throttled);

  s = (*reader)->read();
  CHECK(s->core_mhz == 900);
  CHECK(s->reasons == std::vector<std::string>{"hw_slowdown", "hw_thermal_slowdown"});
  CHECK(s->throttled);
}

TEST_CASE("the NVML reader counts the processes with a compute context on the GPU", "[clocks][unit]") {
  FakeNvmlScript script(kDevice +
                        "sample 1980 2619 45 350000 0\n"      // this process alone (the default)
                        "sample 1980 2619 45 350000 0 3\n"    // two others beside it
                        "sample 1980 2619 45 350000 0 0\n");  // none: NVML answers success, not a count
  auto reader = nvml::open_nvml_clock_reader("GPU-0c1d2e3f", KFORGE_FAKE_NVML);
  REQUIRE(reader.ok());
  CHECK((*reader)->read()->gpu_processes == 1);
  CHECK((*reader)->read()->gpu_processes == 3);
  CHECK((*reader)->read()->gpu_processes == 0);
  // A library without the call: not read.
  auto legacy = nvml::open_nvml_clock_reader("GPU-0c1d2e3f", KFORGE_FAKE_NVML_LEGACY);
  REQUIRE(legacy.ok());
  CHECK((*legacy)->read()->gpu_processes == -1);
}

TEST_CASE("the NVML reader finds the GPU by PCI bus id and falls back to the throttle-reasons symbol",
          "[clocks][unit]") {
  FakeNvmlScript script(kDevice + "sample 1500 1200 70 250000 40\n");
  auto legacy = nvml::NvmlApi::load(KFORGE_FAKE_NVML_LEGACY);
  REQUIRE(legacy.ok());
  CHECK((*legacy)->current_reasons_symbol == "nvmlDeviceGetCurrentClocksThrottleReasons");
  CHECK(nvml::NvmlApi::load(KFORGE_FAKE_NVML).value()->current_reasons_symbol ==
        "nvmlDeviceGetCurrentClocksEventReasons");

  auto reader = nvml::open_nvml_clock_reader("00000000:17:00.0", KFORGE_FAKE_NVML_LEGACY);
  REQUIRE(reader.ok());
  auto s = (*reader)->read();
  REQUIRE(s.ok());
  CHECK(s->core_mhz == 1500);
  CHECK(s->reasons == std::vector<std::string>{"hw_thermal_slowdown"});
  CHECK(s->throttled);
}

TEST_CASE("without NVML, its symbols or the device there is no reader, with the reason", "[clocks][unit]") {
  FakeNvmlScript script(kDevice + "sample 1500 1200 70 250000 0\n");
  auto missing = nvml::open_nvml_clock_reader("GPU-0c1d2e3f", "/nonexistent/libnvidia-ml.so.1");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == ErrorCode::kNotFound);
  CHECK(missing.error().message.find("NVML (libnvidia-ml.so.1) not found") == 0);

  // A library that loads but is not NVML.
  auto not_nvml = nvml::open_nvml_clock_reader("GPU-0c1d2e3f", "libc.so.6");
  REQUIRE_FALSE(not_nvml.ok());
  CHECK(not_nvml.error().code == ErrorCode::kNotFound);
  CHECK(not_nvml.error().message == "symbol nvmlInit_v2 not found in libc.so.6");

  auto other_gpu = nvml::open_nvml_clock_reader("GPU-99999999", KFORGE_FAKE_NVML);
  REQUIRE_FALSE(other_gpu.ok());
  CHECK(other_gpu.error().message == "NVML has no device GPU-99999999: Not Found (6)");
}

TEST_CASE("KFORGE_NVML_LIBRARY chooses the NVML library", "[clocks][unit]") {
  FakeNvmlScript script(kDevice + "sample 1234 1200 70 250000 0\n");
  auto reader = [] {
    const test::ScopedEnv library("KFORGE_NVML_LIBRARY", KFORGE_FAKE_NVML);
    return nvml::open_nvml_clock_reader("GPU-0c1d2e3f");
  }();
  REQUIRE(reader.ok());
  CHECK((*reader)->read().value().core_mhz == 1234);
}

TEST_CASE("the CPU reader averages cpufreq over cores, else /proc/cpuinfo", "[clocks][unit]") {
  test::TempDir dir;
  const std::string cpuinfo = dir.file("cpuinfo");
  test::write_file(cpuinfo, "processor\t: 0\ncpu MHz\t\t: 2000.000\n\nprocessor\t: 1\ncpu MHz\t\t: 3000.500\n");

  SECTION("cpufreq, in kHz, wins where present") {
    for (const auto& [cpu, khz] : {std::pair{"cpu0", "1200000"}, {"cpu1", "1800000"}, {"cpu12", "2400000"}}) {
      std::filesystem::create_directories(dir.path() / "cpu" / cpu / "cpufreq");
      test::write_file((dir.path() / "cpu" / cpu / "cpufreq" / "scaling_cur_freq").string(), khz);
    }
    std::filesystem::create_directories(dir.path() / "cpu" / "cpufreq");  // the policy directory, not a core
    auto reader = make_cpu_clock_reader((dir.path() / "cpu").string(), cpuinfo);
    REQUIRE(reader.ok());
    CHECK((*reader)->source() == "cpufreq");
    auto s = (*reader)->read();
    REQUIRE(s.ok());
    CHECK(s->core_mhz == Approx(1800.0));
    CHECK_FALSE(s->reasons_known);
    CHECK_FALSE(s->throttled);
  }
  SECTION("/proc/cpuinfo's cpu MHz lines otherwise") {
    auto reader = make_cpu_clock_reader(dir.file("no-cpufreq"), cpuinfo);
    REQUIRE(reader.ok());
    CHECK((*reader)->source() == "/proc/cpuinfo");
    CHECK((*reader)->read().value().core_mhz == Approx(2500.25));
  }
  SECTION("neither: no reader") {
    test::write_file(cpuinfo, "processor\t: 0\n");
    auto reader = make_cpu_clock_reader(dir.file("no-cpufreq"), cpuinfo);
    REQUIRE_FALSE(reader.ok());
    CHECK(reader.error().code == ErrorCode::kNotFound);
  }
}

TEST_CASE("the CPU reader counts the host's CPU time since its last reading and other processes' part",
          "[clocks][unit]") {
  test::TempDir dir;
  const std::string cpuinfo = dir.file("cpuinfo"), stat = dir.file("stat"), self = dir.file("self-stat");
  test::write_file(cpuinfo, "processor\t: 0\ncpu MHz\t\t: 2000.000\n");
  // user nice system idle iowait irq softirq steal guest guest_nice; this
  // process's utime and stime are fields 14 and 15, after "(name)".
  auto host = [&](int user, int system, int idle, int self_user, int self_system) {
    test::write_file(stat, "cpu  " + std::to_string(user) + " 0 " + std::to_string(system) + " " +
                               std::to_string(idle) + " 10 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n");
    test::write_file(self, "4242 (kforge (worker)) S 1 4242 4242 0 -1 4194304 100 0 0 0 " + std::to_string(self_user) +
                               " " + std::to_string(self_system) + " 0 0 20 0 3 0 100 1000 200\n");
  };
  host(100, 50, 800, 60, 20);
  auto reader = make_cpu_clock_reader(dir.file("no-cpufreq"), cpuinfo, stat, self, dir.file("no-pressure"));
  REQUIRE(reader.ok());
  host(200, 70, 900, 120, 30);
  (*reader)->restart();  // counts from here
  host(300, 90, 960, 170, 40);
  auto s = (*reader)->read();
  REQUIRE(s.ok());
  // All: 1360 - 1180 = 180 ticks; busy: 390 - 270 = 120, of which this process 60.
  CHECK(s->cpu_ticks == 180);
  CHECK(s->other_cpu_ticks == 60);
  // The next reading counts from this one.
  host(310, 90, 1000, 175, 40);
  s = (*reader)->read();
  REQUIRE(s.ok());
  CHECK(s->cpu_ticks == 50);
  CHECK(s->other_cpu_ticks == 5);
  // Unreadable counters leave the clock and say nothing of the load.
  std::filesystem::remove(stat);
  s = (*reader)->read();
  REQUIRE(s.ok());
  CHECK(s->core_mhz == Approx(2000.0));
  CHECK(s->cpu_ticks == -1);
  CHECK(s->other_cpu_ticks == -1);
}

TEST_CASE("the CPU reader counts the time tasks waited for a core since its last reading", "[clocks][unit]") {
  test::TempDir dir;
  const std::string cpuinfo = dir.file("cpuinfo"), pressure = dir.file("pressure");
  test::write_file(cpuinfo, "processor\t: 0\ncpu MHz\t\t: 2000.000\n");
  auto stall = [&](long total_us) {
    test::write_file(pressure, "some avg10=1.00 avg60=0.50 avg300=0.10 total=" + std::to_string(total_us) +
                                   "\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
  };
  stall(1000);
  auto reader = make_cpu_clock_reader(dir.file("no-cpufreq"), cpuinfo, dir.file("no-stat"), dir.file("no-self"),
                                      pressure);
  REQUIRE(reader.ok());
  stall(5000);
  (*reader)->restart();  // counts from here
  // Long enough that the 300 us counted next are within the wall time.
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  stall(5300);
  auto s = (*reader)->read();
  REQUIRE(s.ok());
  CHECK(s->cpu_wait_us == 300);
  CHECK(s->wall_us >= 2000);
  CHECK(s->cpu_ticks == -1);  // /proc/stat's counters are another matter
  // No pressure file (a kernel without it, or psi=0): not read.
  std::filesystem::remove(pressure);
  s = (*reader)->read();
  REQUIRE(s.ok());
  CHECK(s->cpu_wait_us == -1);
  CHECK(s->wall_us == -1);
  // A file without a "some" total says nothing either.
  test::write_file(pressure, "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
  (*reader)->restart();
  s = (*reader)->read();
  REQUIRE(s.ok());
  CHECK(s->cpu_wait_us == -1);
}

TEST_CASE("the CPU reader reads a plausible clock on this machine", "[clocks][unit]") {
  auto reader = make_cpu_clock_reader();
  REQUIRE(reader.ok());  // every Linux has /proc/cpuinfo; x86 and most ARM kernels print cpu MHz or cpufreq
  auto s = (*reader)->read();
  REQUIRE(s.ok());
  INFO((*reader)->source() << ": " << s->core_mhz << " MHz");
  CHECK(s->core_mhz > 100);
  CHECK(s->core_mhz < 10000);
  CHECK_FALSE(s->throttled);
  // /proc/stat ticks at 100 Hz: 200 ms of this process spinning is counted.
  (*reader)->restart();
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  while (std::chrono::steady_clock::now() < until) {
  }
  s = (*reader)->read();
  REQUIRE(s.ok());
  CHECK(s->cpu_ticks > 0);
  CHECK(s->other_cpu_ticks >= 0);
  CHECK(s->other_cpu_ticks <= s->cpu_ticks);
}

TEST_CASE("on this machine the CPU reader counts the wait of more spinning threads than cores", "[clocks][unit]") {
  std::ifstream probe("/proc/pressure/cpu");
  std::string first;
  if (!std::getline(probe, first) || first.find("total=") == std::string::npos) {
    WARN("SKIPPED: this kernel keeps no CPU pressure stall information (/proc/pressure/cpu)");
    return;
  }
  auto reader = make_cpu_clock_reader();
  REQUIRE(reader.ok());
  (*reader)->restart();
  // Twice as many threads as cores, spinning 300 ms: a core's queue always
  // holds a thread that waits.
  const unsigned n = 2 * std::max(1u, std::thread::hardware_concurrency());
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  std::vector<std::thread> spinners;
  for (unsigned i = 0; i < n; ++i) {
    spinners.emplace_back([until] {
      while (std::chrono::steady_clock::now() < until) {
      }
    });
  }
  for (auto& t : spinners) t.join();
  auto s = (*reader)->read();
  REQUIRE(s.ok());
  INFO("waited " << s->cpu_wait_us << " us of " << s->wall_us);
  CHECK(s->wall_us >= 300000);
  CHECK(s->cpu_wait_us > 0.1 * s->wall_us);
  CHECK(s->cpu_wait_us <= s->wall_us);
}
