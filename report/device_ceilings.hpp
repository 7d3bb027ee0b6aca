// Peak throughput of devices, for `kforge report`'s roofline: vendor
// datasheet numbers for common GPUs, and user-supplied ones (--ceilings FILE).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "db/records.hpp"

namespace kforge::report {

struct DeviceCeilings {
  std::string match;           ///< case-insensitive substring of the device name
  std::string backend;         ///< "" matches any backend
  double fp32_gflops = 0;      ///< FP32 vector (SIMT) peak, GFLOP/s; 0 = unknown
  double fp16_gflops = 0;      ///< dense FP16/BF16 tensor (matrix) core peak, GFLOP/s; 0 = unknown
  double bandwidth_gbs = 0;    ///< memory bandwidth, GB/s; 0 = unknown
  std::string source;          ///< where the numbers come from
  /// The bandwidth and the FP32 peak are kforge's own measurements
  /// (`kforge ceilings`), not the datasheet's.
  bool measured_bandwidth = false, measured_fp32 = false;
};

/// The built-in table: datasheet peaks (boost clock, dense) of common GPUs.
/// More specific names come first (e.g. "H100 PCIe" before "H100").
const std::vector<DeviceCeilings>& builtin_ceilings();

/// Reads a JSON array of objects with `match` (required), `backend`,
/// `fp32_gflops`, `fp16_gflops`, `bandwidth_gbs`, `source`. Errors name the
/// file, the element and the field.
Result<std::vector<DeviceCeilings>> load_ceilings(const std::string& path);

/// The first entry of `user`, then of the built-in table, matching the device;
/// then the device's measured ceilings (by device key) replace its bandwidth
/// and FP32 peak: what kforge measured comes before any datasheet.
std::optional<DeviceCeilings> find_ceilings(const DeviceRecord& d, const std::vector<DeviceCeilings>& user,
                                            const std::vector<MeasuredCeilingRecord>& measured = {});

}  // namespace kforge::report
