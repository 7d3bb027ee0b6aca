// Device discovery across backends and selector resolution.
//
// Each backend contributes a `BackendEntry` (its name, how to list its
// devices, how to open device N). CUDA and HIP load their drivers through
// dlopen, so listing is harmless (empty, silent) without them. A selector is
// "auto", "<backend>:<N>", or a text that names a device as stored devices
// are named (db/device_match.hpp).
#include "runtime/device/device_registry.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <span>
#include <string_view>

#include "db/device_match.hpp"
#include "generator/backend_traits.hpp"
#include "runtime/device/cuda/cuda_backend.hpp"
#include "runtime/device/hip/hip_backend.hpp"
#include "runtime/device/host/triton_interpreter.hpp"
#include "runtime/device/opencl/opencl_backend.hpp"

namespace kforge {
namespace {

struct BackendEntry {
  std::string_view name;  ///< selector prefix and DeviceInfo::backend
  std::string_view display;
  std::vector<DeviceInfo> (*list)();
  Result<std::unique_ptr<Device>> (*open)(std::size_t index);
};

constexpr BackendEntry kBackends[] = {
    {"opencl", "OpenCL", &list_opencl_devices, &open_opencl_device},
    {"cuda", "CUDA", &list_cuda_devices, &open_cuda_device},
    {"hip", "HIP", &list_hip_devices, &open_hip_device},
};

/// Opened by their selector alone: never listed, never "auto"'s pick (a
/// device that checks logic and cannot time).
constexpr BackendEntry kNamedOnly[] = {
    {kInterpreterBackend, "Triton interpreter", &list_interpreter_devices, &open_interpreter_device},
};

/// The backend whose selector prefix is `prefix`, listed or not.
const BackendEntry* entry_named(std::string_view prefix) {
  for (const std::span<const BackendEntry> entries : {std::span<const BackendEntry>(kBackends),
                                                      std::span<const BackendEntry>(kNamedOnly)}) {
    for (const auto& b : entries) {
      if (prefix == b.name) return &b;
    }
  }
  return nullptr;
}

/// GPU through its native backend (CUDA, HIP), then a GPU through OpenCL,
/// then an accelerator, then a CPU.
int type_rank(const DeviceInfo& d) {
  if (d.device_type == DeviceType::kGpu) return is_backend(d.backend, BackendId::kOpenCL) ? 2 : 3;
  if (d.device_type == DeviceType::kAccelerator) return 1;
  return 0;
}

std::optional<std::size_t> parse_index(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::size_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string expected_selectors() {
  std::string out = "auto";
  for (const auto& b : kBackends) out += " or " + std::string(b.name) + ":N";
  for (const auto& b : kNamedOnly) out += " or " + std::string(b.name) + ":0";
  return out;
}

}  // namespace

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> out;
  for (const auto& b : kBackends) {
    auto devices = b.list();
    out.insert(out.end(), devices.begin(), devices.end());
  }
  return out;
}

namespace {

/// Where a selector points among the live devices: backend and index.
struct DevicePlace {
  const BackendEntry* backend = nullptr;
  std::size_t index = 0;
  DeviceInfo info;
};

/// Strictly better only: ties keep the first device in listing order.
bool better(const DeviceInfo& d, const DeviceInfo& best) {
  return type_rank(d) > type_rank(best) ||
         (type_rank(d) == type_rank(best) && d.compute_units > best.compute_units);
}

/// The best live device that `keep` accepts, in the "auto" order.
template <typename Keep>
std::optional<DevicePlace> best_place(Keep keep) {
  std::optional<DevicePlace> best;
  for (const auto& b : kBackends) {
    const auto devices = b.list();
    for (std::size_t i = 0; i < devices.size(); ++i) {
      if (!keep(devices[i])) continue;
      if (!best || better(devices[i], best->info)) best = DevicePlace{&b, i, devices[i]};
    }
  }
  return best;
}

DeviceRecord as_record(const DeviceInfo& d) {
  return {0, d.hardware_key(), d.backend, d.vendor, d.name, d.arch, ""};
}

std::string present_devices() {
  std::string out;
  for (const auto& b : kBackends) {
    const auto devices = b.list();
    for (std::size_t i = 0; i < devices.size(); ++i) {
      out += (out.empty() ? "" : "; ") + std::string(b.name) + ":" + std::to_string(i) + " " + devices[i].name;
    }
  }
  return out.empty() ? "none" : out;
}

Result<DevicePlace> indexed_place(const BackendEntry& b, const std::string& selector, std::size_t index) {
  const auto devices = b.list();
  const std::size_t count = devices.size();
  if (index < count) return DevicePlace{&b, index, devices[index]};
  return Error::not_found("no device '" + selector + "': " + std::to_string(count) + " " +
                          std::string(b.display) + " device" + (count == 1 ? "" : "s") + " present" +
                          (count > 0 ? " (" + std::string(b.name) + ":0.." + std::string(b.name) + ":" +
                                           std::to_string(count - 1) + ")"
                                     : std::string()));
}

Result<DevicePlace> resolve_place(const std::string& selector) {
  if (selector == "auto") {
    auto best = best_place([](const DeviceInfo&) { return true; });
    if (!best) return Error::not_found("no device found: install an OpenCL driver (e.g. pocl-opencl-icd)");
    return *best;
  }
  if (const auto colon = selector.find(':'); colon != std::string::npos) {
    const BackendEntry* b = entry_named(std::string_view(selector).substr(0, colon));
    if (auto index = parse_index(std::string_view(selector).substr(colon + 1)); b && index) {
      return indexed_place(*b, selector, *index);
    }
  }
  // A key, an arch, backend:arch or part of a name: as stored devices match.
  auto best = best_place([&](const DeviceInfo& d) { return device_matches(selector, as_record(d)); });
  if (best) return *best;
  return Error::bad_input("no device matches '" + selector + "' (expected " + expected_selectors() +
                          ", or a device's key, arch, backend:arch or part of its name; present: " +
                          present_devices() + ")");
}

}  // namespace

std::string local_rank_selector(const std::vector<DeviceInfo>& devices, int local_rank) {
  const DeviceInfo* best = nullptr;
  for (const auto& d : devices) {
    if (!best || better(d, *best)) best = &d;
  }
  if (!best) return "auto";
  if (best->device_type != DeviceType::kGpu) return best->selector;
  // The GPUs of the best one's kind and backend, in listing order: a node's
  // GPUs seen through both CUDA and OpenCL are counted once.
  std::vector<const DeviceInfo*> gpus;
  for (const auto& d : devices) {
    if (d.device_type == DeviceType::kGpu && d.backend == best->backend) gpus.push_back(&d);
  }
  const auto n = static_cast<int>(gpus.size());
  return gpus[static_cast<std::size_t>(((local_rank % n) + n) % n)]->selector;
}

bool is_live_selector(std::string_view selector) {
  if (selector == "auto") return true;
  const auto colon = selector.find(':');
  if (colon == std::string_view::npos) return false;
  return entry_named(selector.substr(0, colon)) && parse_index(selector.substr(colon + 1));
}

Result<DeviceInfo> resolve_device(const std::string& selector) {
  KF_TRY_ASSIGN(place, resolve_place(selector));
  return place.info;
}

Result<std::unique_ptr<Device>> open_device(const std::string& selector) {
  KF_TRY_ASSIGN(place, resolve_place(selector));
  return place.backend->open(place.index);
}

}  // namespace kforge
