// A device's fingerprint: hardware identity plus the software that drives it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "generator/device_limits.hpp"
#include "generator/hardware_identity.hpp"

namespace kforge {

/// What kind of processor a device is.
enum class DeviceType { kUnknown, kGpu, kCpu, kAccelerator };
/// The name a fingerprint's JSON and the device list carry: "gpu", "cpu",
/// "accelerator" ("" while unknown).
std::string_view device_type_name(DeviceType t);
/// The type a name stands for; kUnknown for any other name.
DeviceType parse_device_type(std::string_view name);

struct DeviceInfo {
  std::string selector;  ///< how the CLI names it: "opencl:0"
  std::string backend;   ///< "opencl", "cuda", "hip"
  std::string vendor;
  std::string name;
  std::string arch;  ///< sm_90, gfx90a, or the CPU's ISA (e.g. "x86_64-haswell")
  DeviceType device_type = DeviceType::kUnknown;
  std::int64_t compute_units = 0;
  std::int64_t clock_mhz = 0;
  std::int64_t global_mem_bytes = 0;
  /// The largest single buffer the device allows (OpenCL's
  /// CL_DEVICE_MAX_MEM_ALLOC_SIZE; global_mem_bytes where there is no such
  /// limit); 0 when unknown. Not part of the hardware key.
  std::int64_t max_alloc_bytes = 0;
  std::int64_t local_mem_bytes = 0;
  std::int64_t max_shared_bytes = 0;  ///< with opt-in (DeviceLimits); 0: local_mem_bytes
  std::int64_t cache_bytes = 0;       ///< last-level cache the device reports
  std::int64_t cache_line_bytes = 0;
  std::int64_t max_block_threads = 0;
  std::int64_t simd_width = 1;  ///< warp/wavefront, or preferred work-group multiple
  bool fp64 = false;            ///< kernels may compute in double (a reference template does)
  std::string driver_version;
  std::string runtime_version;  ///< platform / runtime version string
  std::string compiler;         ///< "pocl", "nvrtc", "hiprtc", or the platform name
  std::string compiler_version;
  std::string host_cpu;  ///< host CPU model name

  /// Hash of the properties that stay the same on one machine
  /// (HardwareIdentity::key: backend, vendor, name, arch, compute units, and
  /// global memory except on CPUs). Software versions are recorded per sweep
  /// instead, so a driver update keeps the device's identity.
  std::string hardware_key() const;
  HardwareIdentity identity() const;
  DeviceLimits limits() const;
  nlohmann::json to_json() const;
  static DeviceInfo from_json(const nlohmann::json& j);
};

}  // namespace kforge
