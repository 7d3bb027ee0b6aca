// profile_target: the collectors of a device, each in its own child process.
#include "tuner/profiling/counter_profiler.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "generator/backend_traits.hpp"
#include "runtime/profiling/perf_counters.hpp"
#include "tuner/profiling/child_command.hpp"
#include "tuner/profiling/ncu_collector.hpp"
#include "tuner/worker/worker_main.hpp"
#include "tuner/worker/worker_protocol.hpp"

namespace kforge {
namespace {

bool contains_word(std::string text, const std::string& word) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text.find(word) != std::string::npos;
}

std::string not_collected(const std::string& collector) {
  return "not collected: run kforge tune with --profile to collect " + collector + " counters";
}

/// Writes the runner setup for the launched process; its path.
std::string write_setup(const ProfileSetup& s) {
  const std::string path = (std::filesystem::path(s.work_dir) / "profile-setup.json").string();
  std::ofstream(path) << to_json(s.runner).dump();
  return path;
}

std::string file_stem(const ProfileSetup& s, const ProfileTarget& t, const std::string& collector) {
  return (std::filesystem::path(s.work_dir) / (collector + "-result" + std::to_string(t.result_id))).string();
}

/// The profile launch's report line in `output`, or null.
nlohmann::json profile_line(const std::string& output_file) {
  std::ifstream in(output_file);
  std::string line;
  nlohmann::json found;
  while (std::getline(in, line)) {
    if (line.rfind(kProfileLinePrefix, 0) == 0) {
      found = nlohmann::json::parse(line.substr(std::string(kProfileLinePrefix).size()), nullptr, false);
    }
  }
  return found;
}

CounterCollection perf_collection(const ProfileSetup& s, const ProfileTarget& t) {
  if (std::string why = PerfCounters::unavailable_reason(); !why.empty())
    return CounterCollection::none("perf", why);
  if (!s.collect) return CounterCollection::none("perf", not_collected("perf"));
  std::vector<std::string> argv = s.launcher;
  for (const std::string& a : {write_setup(s), t.template_name, t.config, std::string("perf")})
    argv.push_back(a);
  const std::string out = file_stem(s, t, "perf") + ".log";
  auto ran = run_command(argv, out, s.timeout_s);
  if (!ran.ok()) return CounterCollection::none("perf", ran.error().message);
  const nlohmann::json line = profile_line(out);
  if (line.is_object() && line.contains("perf")) return collection_from_json(line["perf"], "perf");
  const std::string why = line.is_object() ? line.value("error", line.value("reason", "")) : "";
  return CounterCollection::none("perf", "the profile launch " + ran->how + (why.empty() ? "" : ": " + why));
}

CounterCollection ncu_collection(const ProfileSetup& s, const ProfileTarget& t) {
  const auto ncu = find_on_path("ncu", s.path.empty() ? nullptr : s.path.c_str());
  if (!ncu) return CounterCollection::none("ncu", "ncu not found on PATH");
  if (!s.collect) return CounterCollection::none("ncu", not_collected("ncu"));
  NcuRun run;
  run.ncu = *ncu;
  run.launcher = s.launcher;
  for (const std::string& a : {write_setup(s), t.template_name, t.config}) run.launcher.push_back(a);
  run.kernel_name = t.kernel_name;
  const std::string stem = file_stem(s, t, "ncu");
  run.log_file = stem + ".csv";
  run.output_file = stem + ".log";
  run.timeout_s = s.timeout_s;
  std::error_code ec;
  std::filesystem::remove(run.log_file, ec);
  return collect_ncu(run);
}

CounterCollection rocprofiler_collection(const ProfileSetup& s) {
  const char* path = s.path.empty() ? nullptr : s.path.c_str();
  for (const char* tool : {"rocprofv3", "rocprof"}) {
    if (auto found = find_on_path(tool, path)) {
      return CounterCollection::none("rocprofiler", "kforge does not read rocprofiler counters yet (" +
                                                        std::string(tool) + " found at " + *found + ")");
    }
  }
  return CounterCollection::none("rocprofiler", "rocprofv3 not found on PATH");
}

}  // namespace

std::vector<std::string> collectors_for(const DeviceInfo& device) {
  if (device.device_type == DeviceType::kCpu) return {"perf"};
  if (const BackendTraits* b = find_backend(device.backend); b && !b->profiler.empty())
    return {std::string(b->profiler)};
  // A GPU through a backend of many vendors (OpenCL): its vendor's profiler.
  if (contains_word(device.vendor, "nvidia")) return {std::string(backend_traits(BackendId::kCuda).profiler)};
  if (contains_word(device.vendor, "amd") || contains_word(device.vendor, "advanced micro devices"))
    return {std::string(backend_traits(BackendId::kHip).profiler)};
  return {};
}

std::vector<CounterCollection> profile_target(const ProfileSetup& s, const ProfileTarget& t) {
  std::vector<CounterCollection> out;
  for (const std::string& collector : collectors_for(s.device)) {
    if (collector == "perf") out.push_back(perf_collection(s, t));
    if (collector == "ncu") out.push_back(ncu_collection(s, t));
    if (collector == "rocprofiler") out.push_back(rocprofiler_collection(s));
  }
  if (out.empty()) {
    out.push_back(CounterCollection::none("none", "no counter collector for " + s.device.vendor + " " +
                                                      std::string(device_type_name(s.device.device_type)) +
                                                      " devices on " + s.device.backend));
  }
  return out;
}

CounterCollection model_collection(double bytes, double flops) {
  return {
      "model", "kforge operator model", {}, {{"model_bytes", bytes, "byte"}, {"model_flops", flops, "flop"}}};
}

}  // namespace kforge
