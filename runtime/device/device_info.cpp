// DeviceInfo: hardware key, limits for manifest expressions, JSON round trip.
#include "runtime/device/device_info.hpp"

#include <cstddef>
#include <string>
#include <type_traits>

namespace kforge {

std::string_view device_type_name(DeviceType t) {
  // In the enum's order.
  constexpr std::string_view kNames[] = {"", "gpu", "cpu", "accelerator"};
  return kNames[static_cast<std::size_t>(t)];
}

DeviceType parse_device_type(std::string_view name) {
  for (DeviceType t : {DeviceType::kGpu, DeviceType::kCpu, DeviceType::kAccelerator}) {
    if (device_type_name(t) == name) return t;
  }
  return DeviceType::kUnknown;
}

std::string DeviceInfo::hardware_key() const {
  return identity().key();
}

HardwareIdentity DeviceInfo::identity() const {
  // Hardware only: driver, runtime and compiler versions are recorded per
  // sweep, so a driver update keeps the key.
  return {backend,       vendor,          name, arch, std::string(device_type_name(device_type)),
          compute_units, global_mem_bytes};
}

DeviceLimits DeviceInfo::limits() const {
  DeviceLimits l;
  l.max_block_threads = max_block_threads;
  l.local_mem_bytes = local_mem_bytes;
  // 0: recorded before the field existed, or a backend without opt-in.
  l.max_shared_bytes = max_shared_bytes > 0 ? max_shared_bytes : local_mem_bytes;
  l.compute_units = compute_units;
  l.simd_width = simd_width;
  return l;
}

// Serialized into the database and exported JSON: adding a field is
// compatible (from_json keeps defaults for missing keys); renaming or
// removing one needs a schema_version bump in those formats.
nlohmann::json DeviceInfo::to_json() const {
  return nlohmann::json{{"selector", selector},
                        {"backend", backend},
                        {"vendor", vendor},
                        {"name", name},
                        {"arch", arch},
                        {"device_type", std::string(device_type_name(device_type))},
                        {"compute_units", compute_units},
                        {"clock_mhz", clock_mhz},
                        {"global_mem_bytes", global_mem_bytes},
                        {"max_alloc_bytes", max_alloc_bytes},
                        {"local_mem_bytes", local_mem_bytes},
                        {"max_shared_bytes", max_shared_bytes},
                        {"cache_bytes", cache_bytes},
                        {"cache_line_bytes", cache_line_bytes},
                        {"max_block_threads", max_block_threads},
                        {"simd_width", simd_width},
                        {"fp64", fp64},
                        {"driver_version", driver_version},
                        {"runtime_version", runtime_version},
                        {"compiler", compiler},
                        {"compiler_version", compiler_version},
                        {"host_cpu", host_cpu},
                        {"hardware_key", hardware_key()}};
}

DeviceInfo DeviceInfo::from_json(const nlohmann::json& j) {
  DeviceInfo d;
  if (!j.is_object()) return d;
  auto get = [&j](const char* key, auto& field) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return;
    using T = std::decay_t<decltype(field)>;
    if constexpr (std::is_same_v<T, std::string>) {
      if (it->is_string()) field = it->template get<std::string>();
    } else if constexpr (std::is_same_v<T, bool>) {
      if (it->is_boolean()) field = it->template get<bool>();
    } else {
      if (it->is_number_integer()) field = it->template get<T>();
    }
  };
  get("selector", d.selector);
  get("backend", d.backend);
  get("vendor", d.vendor);
  get("name", d.name);
  get("arch", d.arch);
  std::string type;
  get("device_type", type);
  d.device_type = parse_device_type(type);
  get("compute_units", d.compute_units);
  get("clock_mhz", d.clock_mhz);
  get("global_mem_bytes", d.global_mem_bytes);
  get("max_alloc_bytes", d.max_alloc_bytes);
  get("local_mem_bytes", d.local_mem_bytes);
  get("max_shared_bytes", d.max_shared_bytes);
  get("cache_bytes", d.cache_bytes);
  get("cache_line_bytes", d.cache_line_bytes);
  get("max_block_threads", d.max_block_threads);
  get("simd_width", d.simd_width);
  get("fp64", d.fp64);
  get("driver_version", d.driver_version);
  get("runtime_version", d.runtime_version);
  get("compiler", d.compiler);
  get("compiler_version", d.compiler_version);
  get("host_cpu", d.host_cpu);
  return d;
}

}  // namespace kforge
