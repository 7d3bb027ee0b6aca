// One wording for the launch and transfer checks of the OpenCL, CUDA and HIP backends.
#include "runtime/device/launch_check.hpp"

namespace kforge {

std::string geometry_text(const LaunchGeometry& g) {
  auto dims = [](const std::array<std::int64_t, 3>& a) {
    return std::to_string(a[0]) + "x" + std::to_string(a[1]) + "x" + std::to_string(a[2]);
  };
  return "block " + dims(g.block) + ", grid " + dims(g.grid);
}

Status check_launch_geometry(const Kernel& kernel, const LaunchGeometry& g, const DeviceLaunchLimits& limits,
                             const LaunchRefusalNames& names) {
  const std::string where = "launch of " + kernel.name() + " (" + geometry_text(g) + ")";
  auto resource = [&](const std::string& why, const char* api_name) {
    const std::string named = *api_name ? " (" + std::string(api_name) + ")" : "";
    return Error{ErrorCode::kResource, where + ": " + why + named, {}};
  };
  std::int64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    if (g.block[i] < 1 || g.grid[i] < 1) {
      return Error::bad_input(where + ": every block and grid dimension must be positive");
    }
    if (limits.max_block_dims[i] > 0 && g.block[i] > limits.max_block_dims[i]) {
      return resource("block dimension " + std::to_string(i) + " exceeds the device's " +
                          std::to_string(limits.max_block_dims[i]),
                      names.block_dims);
    }
    threads *= g.block[i];
  }
  const ResourceReport res = kernel.resources();
  if (res.max_block_threads > 0 && threads > res.max_block_threads) {
    return resource(std::to_string(threads) + " threads per block exceed the kernel's limit of " +
                        std::to_string(res.max_block_threads),
                    names.block_threads);
  }
  if (limits.local_mem_bytes > 0 && res.local_mem_bytes > limits.local_mem_bytes) {
    return resource(std::to_string(res.local_mem_bytes) + " bytes of local memory exceed the device's " +
                        std::to_string(limits.local_mem_bytes),
                    names.local_mem);
  }
  return ok_status();
}

Status check_transfer_size(Transfer direction, std::size_t bytes, std::size_t buffer_bytes) {
  if (bytes <= buffer_bytes) return ok_status();
  const bool write = direction == Transfer::kWrite;
  return Error::bad_input(std::string(write ? "write of " : "read of ") + std::to_string(bytes) +
                          (write ? " bytes into a buffer of " : " bytes from a buffer of ") +
                          std::to_string(buffer_bytes));
}

}  // namespace kforge
