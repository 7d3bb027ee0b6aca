// The few NVML (NVIDIA Management Library) calls kforge makes to read a GPU's
// clocks, bound at run time with dlopen like the CUDA driver (cuda_api.hpp).
//
// Declared here rather than taken from nvml.h: no Debian package installs
// nvml.h (it ships with the CUDA toolkit and the driver SDK), and kforge must
// build without either. Signatures, enum values and the clocks event reason
// bits are those of NVIDIA's public NVML API reference (nvml.h of driver
// R525..R590, "NvmlClocksEventReasons", formerly "NvmlClocksThrottleReasons";
// the bit values are the same in CUDA 9.1's nvml.h and today's).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "runtime/platform/dynamic_library.hpp"
#include "runtime/profiling/clock_reader.hpp"

namespace kforge::nvml {

using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;

inline constexpr nvmlReturn_t kSuccess = 0;
inline constexpr nvmlReturn_t kErrorNotSupported = 3;
inline constexpr nvmlReturn_t kErrorInsufficientSize = 7;

// nvmlClockType_t
inline constexpr int kClockSm = 1;
inline constexpr int kClockMem = 2;
// nvmlTemperatureSensors_t
inline constexpr int kTemperatureGpu = 0;

// nvmlClocksEventReason* bits.
inline constexpr std::uint64_t kReasonGpuIdle = 0x1;
inline constexpr std::uint64_t kReasonApplicationsClocksSetting = 0x2;
inline constexpr std::uint64_t kReasonSwPowerCap = 0x4;
inline constexpr std::uint64_t kReasonHwSlowdown = 0x8;
inline constexpr std::uint64_t kReasonSyncBoost = 0x10;
inline constexpr std::uint64_t kReasonSwThermalSlowdown = 0x20;
inline constexpr std::uint64_t kReasonHwThermalSlowdown = 0x40;
inline constexpr std::uint64_t kReasonHwPowerBrakeSlowdown = 0x80;
inline constexpr std::uint64_t kReasonDisplayClockSetting = 0x100;

/// The bits that slow kernels down: SW power cap, HW slowdown, SW and HW
/// thermal slowdown, HW power brake. Idle, application and display clock
/// settings and sync boost are not throttling.
inline constexpr std::uint64_t kThrottlingReasons = kReasonSwPowerCap | kReasonHwSlowdown |
                                                    kReasonSwThermalSlowdown | kReasonHwThermalSlowdown |
                                                    kReasonHwPowerBrakeSlowdown;

/// The set bits of `mask` by name ("gpu_idle", "sw_power_cap", ...), in bit
/// order; bits NVML added later than this list read "reason_0x200".
std::vector<std::string> reason_names(std::uint64_t mask);

/// NVML as loaded from one library file, nvmlInit_v2 called.
struct NvmlApi {
  DynamicLibrary lib;
  nvmlReturn_t (*nvmlInit_v2)() = nullptr;
  const char* (*nvmlErrorString)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetHandleByPciBusId_v2)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetHandleByUUID)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetClockInfo)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetTemperature)(nvmlDevice_t, int, unsigned*) = nullptr;  ///< optional
  nvmlReturn_t (*nvmlDeviceGetPowerUsage)(nvmlDevice_t, unsigned*) = nullptr;       ///< optional, mW
  /// nvmlDeviceGetCurrentClocksEventReasons, or where the library predates it
  /// (before R535) nvmlDeviceGetCurrentClocksThrottleReasons: same signature.
  nvmlReturn_t (*current_reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  std::string current_reasons_symbol;  ///< which of the two was bound
  /// nvmlDeviceGetComputeRunningProcesses_v3, else _v2, else the first
  /// (optional). Only the count is asked for (a zero count and no array:
  /// kErrorInsufficientSize with the count, or kSuccess when none), so the
  /// process record's layout, which changed between versions, never matters.
  nvmlReturn_t (*running_processes)(nvmlDevice_t, unsigned*, void*) = nullptr;

  /// NVML from `library` (empty: $KFORGE_NVML_LIBRARY, else libnvidia-ml.so.1
  /// on the loader path), loaded and initialized once per file for the
  /// process. kNotFound names the library or symbol missing; an nvmlInit_v2
  /// failure (no driver loaded) is kNotFound with NVML's error string.
  static Result<const NvmlApi*> load(const std::string& library = {});
  /// "Not Supported (3)".
  std::string error_text(nvmlReturn_t r) const;
};

/// A ClockReader for one GPU through NVML. `device_id` names the GPU as NVML
/// does: a UUID ("GPU-8c2f...", what cuDeviceGetUuid gives) or a PCI bus id
/// ("00000000:17:00.0", any form nvmlDeviceGetHandleByPciBusId_v2 accepts).
/// `library` as for NvmlApi::load. kNotFound when NVML or the device is
/// missing: the caller then has no reader, which is not an error for timing.
Result<std::unique_ptr<ClockReader>> open_nvml_clock_reader(const std::string& device_id,
                                                             const std::string& library = {});

}  // namespace kforge::nvml
