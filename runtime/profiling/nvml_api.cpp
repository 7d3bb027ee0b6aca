// Binds NVML with dlopen/dlsym and reads one GPU's clocks through it.
#include "runtime/profiling/nvml_api.hpp"

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace kforge::nvml {

namespace {

Result<const NvmlApi*> load_library(const std::vector<std::string>& candidates) {
  auto api = std::make_unique<NvmlApi>();
  KF_TRY_ASSIGN(lib, DynamicLibrary::open("NVML", candidates));
  api->lib = std::move(lib);
  KF_TRY(api->lib.bind(api->nvmlInit_v2, "nvmlInit_v2"));
  KF_TRY(api->lib.bind(api->nvmlErrorString, "nvmlErrorString"));
  KF_TRY(api->lib.bind(api->nvmlDeviceGetHandleByPciBusId_v2, "nvmlDeviceGetHandleByPciBusId_v2"));
  KF_TRY(api->lib.bind(api->nvmlDeviceGetHandleByUUID, "nvmlDeviceGetHandleByUUID"));
  KF_TRY(api->lib.bind(api->nvmlDeviceGetClockInfo, "nvmlDeviceGetClockInfo"));
  (void)api->lib.bind(api->nvmlDeviceGetTemperature, "nvmlDeviceGetTemperature");
  (void)api->lib.bind(api->nvmlDeviceGetPowerUsage, "nvmlDeviceGetPowerUsage");
  for (const char* sym : {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"}) {
    if (api->lib.bind(api->current_reasons, sym).ok()) {
      api->current_reasons_symbol = sym;
      break;
    }
  }
  for (const char* sym : {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
                          "nvmlDeviceGetComputeRunningProcesses"}) {
    if (api->lib.bind(api->running_processes, sym).ok()) break;
  }
  if (!api->current_reasons) {
    return Error::not_found("symbol nvmlDeviceGetCurrentClocksEventReasons (or ...ThrottleReasons) not found in " +
                            api->lib.path());
  }
  if (const nvmlReturn_t r = api->nvmlInit_v2(); r != kSuccess) {
    return Error::not_found("nvmlInit_v2 failed: " + api->error_text(r));
  }
  return api.release();  // kept for the process, like the library itself
}

double known(nvmlReturn_t r, unsigned value, double scale = 1.0) {
  return r == kSuccess ? static_cast<double>(value) * scale : -1.0;
}

class NvmlClockReader final : public ClockReader {
 public:
  NvmlClockReader(const NvmlApi& api, nvmlDevice_t device) : api_(api), device_(device) {}

  const std::string& source() const override { return source_; }

  Result<ClockSample> read() override {
    ClockSample s;
    unsigned sm = 0;
    if (const nvmlReturn_t r = api_.nvmlDeviceGetClockInfo(device_, kClockSm, &sm); r != kSuccess) {
      return Error{ErrorCode::kLaunch, "nvmlDeviceGetClockInfo(SM): " + api_.error_text(r), {}};
    }
    s.core_mhz = sm;
    // Each call first, then its value: argument evaluation order is unspecified.
    unsigned mem = 0;
    const nvmlReturn_t mem_r = api_.nvmlDeviceGetClockInfo(device_, kClockMem, &mem);
    s.memory_mhz = known(mem_r, mem);
    unsigned temp = 0;
    if (api_.nvmlDeviceGetTemperature) {
      const nvmlReturn_t r = api_.nvmlDeviceGetTemperature(device_, kTemperatureGpu, &temp);
      s.temperature_c = known(r, temp);
    }
    unsigned milliwatts = 0;
    if (api_.nvmlDeviceGetPowerUsage) {
      const nvmlReturn_t r = api_.nvmlDeviceGetPowerUsage(device_, &milliwatts);
      s.power_w = known(r, milliwatts, 1e-3);
    }
    unsigned long long mask = 0;
    if (api_.current_reasons(device_, &mask) == kSuccess) {
      s.reasons_known = true;
      s.reasons_mask = mask;
      s.reasons = reason_names(mask);
      s.throttled = (mask & kThrottlingReasons) != 0;
    }
    if (api_.running_processes) {
      unsigned count = 0;
      const nvmlReturn_t r = api_.running_processes(device_, &count, nullptr);
      if (r == kSuccess || r == kErrorInsufficientSize) s.gpu_processes = static_cast<int>(count);  // 0 on success
    }
    return s;
  }

 private:
  const NvmlApi& api_;
  nvmlDevice_t device_;
  std::string source_ = "nvml";
};

}  // namespace

std::vector<std::string> reason_names(std::uint64_t mask) {
  static constexpr std::pair<std::uint64_t, const char*> kNames[] = {
      {kReasonGpuIdle, "gpu_idle"},
      {kReasonApplicationsClocksSetting, "applications_clocks_setting"},
      {kReasonSwPowerCap, "sw_power_cap"},
      {kReasonHwSlowdown, "hw_slowdown"},
      {kReasonSyncBoost, "sync_boost"},
      {kReasonSwThermalSlowdown, "sw_thermal_slowdown"},
      {kReasonHwThermalSlowdown, "hw_thermal_slowdown"},
      {kReasonHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
      {kReasonDisplayClockSetting, "display_clock_setting"},
  };
  std::vector<std::string> out;
  for (int bit = 0; bit < 64; ++bit) {
    const std::uint64_t b = std::uint64_t{1} << bit;
    if (!(mask & b)) continue;
    std::string name;
    for (const auto& [value, text] : kNames) {
      if (value == b) name = text;
    }
    if (name.empty()) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "reason_0x%llx", static_cast<unsigned long long>(b));
      name = buf;
    }
    out.push_back(std::move(name));
  }
  return out;
}

Result<const NvmlApi*> NvmlApi::load(const std::string& library) {
  return load_once(library_files(library, "KFORGE_NVML_LIBRARY", {"libnvidia-ml.so.1"}), &load_library);
}

std::string NvmlApi::error_text(nvmlReturn_t r) const {
  const char* text = nvmlErrorString ? nvmlErrorString(r) : nullptr;
  return std::string(text ? text : "NVML error") + " (" + std::to_string(r) + ")";
}

Result<std::unique_ptr<ClockReader>> open_nvml_clock_reader(const std::string& device_id,
                                                             const std::string& library) {
  KF_TRY_ASSIGN(api, NvmlApi::load(library));
  nvmlDevice_t device = nullptr;
  const bool by_uuid = device_id.rfind("GPU-", 0) == 0 || device_id.rfind("MIG-", 0) == 0;
  const nvmlReturn_t r = by_uuid ? api->nvmlDeviceGetHandleByUUID(device_id.c_str(), &device)
                                 : api->nvmlDeviceGetHandleByPciBusId_v2(device_id.c_str(), &device);
  if (r != kSuccess) {
    return Error::not_found(std::string("NVML has no device ") + device_id + ": " + api->error_text(r));
  }
  return std::unique_ptr<ClockReader>(std::make_unique<NvmlClockReader>(*api, device));
}

}  // namespace kforge::nvml
