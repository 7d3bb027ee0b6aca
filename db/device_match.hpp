// How a `--device` text names a stored device: one rule for every command
// that reads devices from a database (export, report, compare) and for the
// live devices `tune` and `lookup` open (runtime/device/device_registry.hpp).
#pragma once

#include <string_view>

#include "db/records.hpp"

namespace kforge {

/// True when `text` is the device's hardware key, its arch ("sm_90"), its
/// "backend:arch" ("cuda:sm_90"), or part of its name (ASCII case-insensitive).
bool device_matches(std::string_view text, const DeviceRecord& d);

}  // namespace kforge
