// The clock record: summary, note, failed reads, JSON round trip through the
// worker protocol and into a result's resources_json.
#include <catch2/catch.hpp>

#include "tuner/measure/timing_stats.hpp"
#include "tuner/worker/worker_protocol.hpp"

using namespace kforge;

namespace {

ClockSample sample(double mhz, bool throttled, std::vector<std::string> reasons = {}) {
  ClockSample s;
  s.core_mhz = mhz;
  s.memory_mhz = 2619;
  s.temperature_c = throttled ? 90 : 60;
  s.power_w = 300;
  s.reasons_known = true;
  s.throttled = throttled;
  s.reasons = std::move(reasons);
  return s;
}

}  // namespace

TEST_CASE("a clock record summarizes its samples and notes throttling", "[clocks][unit]") {
  ClockRecord r;
  CHECK(r.empty());
  CHECK(r.to_json().is_null());
  r.source = "nvml";
  r.add(sample(1980, false));
  r.add(sample(1500, true, {"hw_slowdown", "gpu_idle"}));
  r.add(Error{ErrorCode::kLaunch, "nvmlDeviceGetClockInfo(SM): GPU is lost (15)", {}});
  r.add(sample(1700, false));
  CHECK(r.core_mhz == std::vector<double>{1980, 1500, -1, 1700});
  CHECK(r.throttled == std::vector<bool>{false, true, false, false});
  CHECK(r.throttled_count() == 1);
  CHECK(r.error == "nvmlDeviceGetClockInfo(SM): GPU is lost (15)");
  CHECK(r.note() == "1 of 4 samples throttled (hw_slowdown); the median includes them");

  const auto j = r.to_json();
  CHECK(j["source"] == "nvml");
  CHECK(j["summary"]["samples"] == 4);
  CHECK(j["summary"]["core_mhz_min"] == 1500.0);  // failed reads are left out of the summary
  CHECK(j["summary"]["core_mhz_median"] == 1700.0);
  CHECK(j["summary"]["core_mhz_max"] == 1980.0);
  CHECK(j["summary"]["temperature_c_max"] == 90.0);
  CHECK(j["summary"]["reasons"] == nlohmann::json::array({"gpu_idle", "hw_slowdown"}));
  CHECK(j["error"] == r.error);
}

TEST_CASE("unthrottled clocks carry no note", "[clocks][unit]") {
  ClockRecord r;
  r.source = "cpufreq";
  ClockSample s;
  s.core_mhz = 2400;
  r.add(s);
  CHECK(r.note().empty());
  CHECK_FALSE(r.to_json().contains("note"));
  CHECK(r.to_json()["summary"]["reasons_known"] == false);
}

TEST_CASE("clocks survive the worker protocol and land in resources_json", "[clocks][unit]") {
  TimingStats t = TimingStats::from_samples({1.0, 1.2, 1.1});
  t.clocks.source = "nvml";
  t.clocks.add(sample(1980, false));
  t.clocks.add(sample(1400, true, {"sw_thermal_slowdown"}));
  t.clocks.add(sample(1900, false, {"gpu_idle"}));

  const TimingStats back = timing_from_json(nlohmann::json::parse(to_json(t).dump()));
  CHECK(back.clocks.source == "nvml");
  CHECK(back.clocks.core_mhz == t.clocks.core_mhz);
  CHECK(back.clocks.throttled == t.clocks.throttled);
  CHECK(back.clocks.reasons == t.clocks.reasons);
  CHECK(back.clocks.temperature_c_max == t.clocks.temperature_c_max);
  CHECK(back.clocks.note() == t.clocks.note());
  CHECK(back.clocks.to_json() == t.clocks.to_json());

  // No reader: nothing in the message, nothing back.
  CHECK(timing_from_json(to_json(TimingStats::from_samples({1.0}))).clocks.empty());
  // Garbage where clocks should be reads as none.
  auto garbled = to_json(t);
  garbled["clocks"] = {{"source", 3}};
  CHECK(timing_from_json(garbled).clocks.empty());

  const auto stored = resources_with_clocks({{"registers", 32}}, t);
  CHECK(stored["registers"] == 32);
  CHECK(stored["clocks"] == t.clocks.to_json());
  CHECK(resources_with_clocks(nullptr, TimingStats{}) == nlohmann::json::object());
}

TEST_CASE("a clock record sums the host's CPU time and other processes' share of it", "[clocks][unit]") {
  ClockRecord r;
  r.source = "cpufreq";
  ClockSample a;
  a.core_mhz = 2400;
  a.cpu_ticks = 20;
  a.other_cpu_ticks = 2;
  ClockSample b = a;
  b.cpu_ticks = 30;
  b.other_cpu_ticks = 18;
  ClockSample unread;  // no tick counts: left out of the sums
  unread.core_mhz = 2400;
  r.add(a);
  r.add(b);
  r.add(unread);
  const auto j = r.to_json();
  CHECK(j["summary"]["cpu_ticks"] == 50.0);
  CHECK(j["summary"]["other_cpu_share"].get<double>() == Approx(0.4));
  // Read back as the worker protocol and the database carry it.
  const ClockRecord back = ClockRecord::from_json(j);
  CHECK(back.cpu_ticks == 50.0);
  CHECK(back.other_cpu_ticks == Approx(20.0));
  // Never read (GPU sources): -1.
  ClockRecord gpu;
  gpu.source = "nvml";
  gpu.add(sample(1980, false));
  CHECK(gpu.to_json()["summary"]["other_cpu_share"] == -1.0);
}

TEST_CASE("a clock record sums the time tasks waited for a core and its share of the wall time", "[clocks][unit]") {
  ClockRecord r;
  r.source = "cpufreq";
  ClockSample a;
  a.core_mhz = 2400;
  a.wall_us = 1500;
  a.cpu_wait_us = 0;
  ClockSample b = a;
  b.wall_us = 2500;
  b.cpu_wait_us = 1000;
  ClockSample unread;  // no pressure stall information: left out of the sums
  unread.core_mhz = 2400;
  r.add(a);
  r.add(b);
  r.add(unread);
  CHECK(r.cpu_wait_share() == Approx(0.25));
  const auto j = r.to_json();
  CHECK(j["summary"]["cpu_wait_wall_ms"].get<double>() == Approx(4.0));
  CHECK(j["summary"]["cpu_wait_share"].get<double>() == Approx(0.25));
  const ClockRecord back = ClockRecord::from_json(j);
  CHECK(back.wall_us == Approx(4000.0));
  CHECK(back.cpu_wait_us == Approx(1000.0));
  ClockRecord gpu;
  gpu.source = "nvml";
  gpu.add(sample(1980, false));
  CHECK(gpu.cpu_wait_share() == -1.0);
  CHECK(gpu.to_json()["summary"]["cpu_wait_share"] == -1.0);
}

TEST_CASE("a clock record keeps the most processes seen on the GPU and notes others", "[clocks][unit]") {
  ClockRecord alone;
  alone.source = "nvml";
  ClockSample s = sample(1980, false);
  s.gpu_processes = 1;
  alone.add(s);
  CHECK(alone.gpu_processes_max == 1);
  CHECK(alone.note().empty());

  ClockRecord shared = alone;
  s.gpu_processes = 3;
  shared.add(s);
  shared.add(sample(1410, true));  // not read this time: the most stays
  CHECK(shared.gpu_processes_max == 3);
  CHECK_THAT(shared.note(), Catch::Contains("3 processes had the GPU") && Catch::Contains("1 of 3 samples throttled"));
  const auto j = shared.to_json();
  CHECK(j["summary"]["gpu_processes_max"] == 3);
  CHECK(ClockRecord::from_json(j).gpu_processes_max == 3);
  // Not read (a CPU device, or NVML without the call): -1 throughout.
  ClockRecord cpu;
  cpu.source = "cpufreq";
  cpu.add(sample(2400, false));
  CHECK(cpu.gpu_processes_max == -1);
  CHECK(cpu.to_json()["summary"]["gpu_processes_max"] == -1);
}
