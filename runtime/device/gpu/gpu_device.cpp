// What the CUDA and HIP devices share outside the device class itself.
#include "runtime/device/gpu/gpu_device.hpp"

namespace kforge {

Status check_device_index(const std::string& backend, const std::string& name, std::size_t index, int count) {
  const int present = std::max(count, 0);
  if (index < static_cast<std::size_t>(present)) return ok_status();
  return Error::not_found("no device '" + backend + ":" + std::to_string(index) +
                          "': " + std::to_string(present) + " " + name + " device(s) present");
}

}  // namespace kforge
