// The hardware identity a device is keyed by in the tuning database: the
// properties that stay the same on one machine (docs/backends.md, "Device key").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kforge {

struct HardwareIdentity {
  std::string backend, vendor, name, arch, device_type;
  std::int64_t compute_units = 0;
  std::int64_t global_mem_bytes = 0;

  /// 16 hex digits over backend, vendor, name, arch and compute units, and
  /// global memory unless the device is a CPU: a CPU device's global memory
  /// is the host's, which its OpenCL platform reads from what the host has
  /// now and changes on the same machine. Stored results are keyed on it:
  /// a change needs a database migration (db/schema.cpp).
  std::string key() const;
  /// The key of schema versions 1 and 2, which hashed global memory for
  /// every device (what the version 3 migration recognizes and replaces).
  std::string key_before_v3() const;
  /// The identity fields of a DeviceInfo JSON (DeviceInfo::to_json);
  /// nullopt unless `j` is an object.
  static std::optional<HardwareIdentity> from_json(const nlohmann::json& j);
};

}  // namespace kforge
