// `kforge ceilings`: measures the device's copy bandwidth and FP32 FMA peak
// with kforge's own kernels and stores them with the device, for the bound
// verdicts of show, report and capabilities (docs/profiling.md).
#include <iostream>

#include "db/database.hpp"
#include "report/tuning_facts.hpp"
#include "tools/commands.hpp"
#include "tuner/build_version.hpp"
#include "tuner/measure/ceiling_probe.hpp"

namespace kforge::cli {

using namespace kforge::report;  // the command prints what the report library computes

namespace {

struct CeilingsOptions {
  std::int64_t copy_mib = 512;
  int repetitions = 7;
};

MeasuredCeilingRecord record_of(const std::string& key, const std::string& name, const MeasuredPeak& p,
                                const std::string& unit) {
  return {key, name, p.value, unit, p.method, tool_version(), ""};
}

}  // namespace

void add_ceilings_command(CLI::App& app, CommonOptions& o) {
  auto* cmd = app.add_subcommand(
      "ceilings",
      "Measure the device's peaks with kforge's own kernels and store them with the device in the database:\n"
      "the device-to-device copy bandwidth (a float4 copy, bytes read + written) and the FP32 FMA throughput\n"
      "(independent FMA chains). Each kernel's output is checked before its time counts. show, report and\n"
      "capabilities then place every result against these (\"at 0.88 of the measured copy bandwidth\"),\n"
      "before any datasheet number (docs/profiling.md, \"Measured ceilings\").");
  auto s = std::make_shared<CeilingsOptions>();
  add_device_flag(*cmd, o);
  add_db_option(*cmd, o, "Tuning database to store the ceilings in (created if missing)");
  cmd->add_option("--copy-mib", s->copy_mib, "Size of each copy buffer, MiB (capped at a quarter of the memory)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--repetitions", s->repetitions, "Timed launches per kernel; the median counts")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  add_json_flag(*cmd, o);
  cmd->callback([&o, s] {
    auto device = open_device(o);
    CeilingProbeOptions options;
    options.copy_bytes = s->copy_mib << 20;
    options.repetitions = s->repetitions;
    const MeasuredPeaks peaks = unwrap(measure_peaks(*device, options));
    const DeviceInfo& info = device->info();
    auto db = unwrap(Database::open(o.db, Database::Mode::kReadWrite));
    unwrap(db->put_device({0, info.hardware_key(), info.backend, info.vendor, info.name, info.arch,
                           info.to_json().dump()}));
    const std::string key = info.hardware_key();
    unwrap(db->put_measured_ceiling(record_of(key, "copy_bandwidth", peaks.copy_bandwidth, "GB/s")));
    unwrap(db->put_measured_ceiling(record_of(key, "fp32_fma", peaks.fp32_fma, "GFLOP/s")));
    if (o.json) {
      auto peak = [](const MeasuredPeak& p, const char* unit) {
        return nlohmann::json{{"value", p.value}, {"unit", unit}, {"median_ms", p.median_ms}, {"method", p.method}};
      };
      print_json({{"device", info.name}, {"device_key", key}, {"database", o.db},
                  {"copy_bandwidth", peak(peaks.copy_bandwidth, "GB/s")},
                  {"fp32_fma", peak(peaks.fp32_fma, "GFLOP/s")}});
      return;
    }
    std::cout << "measured on " << info.name << " (" << info.selector << "), stored in " << o.db << ":\n";
    print_table({"ceiling", "value", "median ms", "method"},
                {{"copy bandwidth", short_number(peaks.copy_bandwidth.value) + " GB/s",
                  short_number(peaks.copy_bandwidth.median_ms), peaks.copy_bandwidth.method},
                 {"FP32 FMA", short_number(peaks.fp32_fma.value) + " GFLOP/s", short_number(peaks.fp32_fma.median_ms),
                  peaks.fp32_fma.method}});
  });
}

}  // namespace kforge::cli
