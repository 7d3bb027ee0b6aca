// Device discovery across backends and selector resolution.
//
// Each backend contributes a `BackendEntry` (its name, how to list its
// devices, how to open device N). CUDA and HIP load their drivers through
// dlopen, so listing is harmless (empty, silent) without them; selectors are
// "<backend>:<N>" throughout.
#include "device_registry.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>

#include "cuda_backend.hpp"
#include "hip_backend.hpp"
#include "opencl_backend.hpp"

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

/// GPU through its native backend (CUDA, HIP), then a GPU through OpenCL,
/// then an accelerator, then a CPU.
int type_rank(const DeviceInfo& d) {
  if (d.device_type == "gpu") return d.backend == "opencl" ? 2 : 3;
  if (d.device_type == "accelerator") return 1;
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

Result<std::unique_ptr<Device>> open_device(const std::string& selector) {
  if (selector == "auto") {
    const BackendEntry* best_backend = nullptr;
    std::size_t best_index = 0;
    const DeviceInfo* best = nullptr;
    std::vector<std::vector<DeviceInfo>> lists;
    lists.reserve(std::size(kBackends));
    for (const auto& b : kBackends) {
      lists.push_back(b.list());
      for (std::size_t i = 0; i < lists.back().size(); ++i) {
        const DeviceInfo& d = lists.back()[i];
        // Strictly better only: ties keep the first device in listing order.
        if (!best || type_rank(d) > type_rank(*best) ||
            (type_rank(d) == type_rank(*best) &&
             d.compute_units > best->compute_units)) {
          best = &d;
          best_backend = &b;
          best_index = i;
        }
      }
    }
    if (!best) {
      return Error::not_found("no device found: install an OpenCL driver (e.g. pocl-opencl-icd)");
    }
    return best_backend->open(best_index);
  }

  const auto colon = selector.find(':');
  if (colon != std::string::npos) {
    const std::string_view prefix = std::string_view(selector).substr(0, colon);
    for (const auto& b : kBackends) {
      if (prefix != b.name) continue;
      auto index = parse_index(std::string_view(selector).substr(colon + 1));
      if (!index) break;
      const std::size_t count = b.list().size();
      if (*index >= count) {
        return Error::not_found("no device '" + selector + "': " + std::to_string(count) + " " +
                                std::string(b.display) + " device" + (count == 1 ? "" : "s") +
                                " present" +
                                (count > 0 ? " (" + std::string(b.name) + ":0.." +
                                                 std::string(b.name) + ":" +
                                                 std::to_string(count - 1) + ")"
                                           : std::string()));
      }
      return b.open(*index);
    }
  }
  return Error::bad_input("unknown device selector '" + selector + "' (expected " +
                          expected_selectors() + ")");
}

}  // namespace kforge
