// The checks every backend makes before a launch, with one wording: the
// geometry against the kernel's and the device's limits, and a transfer's
// size against its buffer.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/device/backend.hpp"

namespace kforge {

/// "block 64x1x1, grid 16x1x1"
std::string geometry_text(const LaunchGeometry& g);

/// Device limits a launch is checked against beside the kernel's own
/// (Kernel::resources); a limit of 0 is unknown and not checked.
struct DeviceLaunchLimits {
  std::array<std::int64_t, 3> max_block_dims{0, 0, 0};
  std::int64_t local_mem_bytes = 0;
};

/// The error a backend's API returns for each refusal, named at the end of
/// the message ("" names none).
struct LaunchRefusalNames {
  const char* block_dims = "";
  const char* block_threads = "";
  const char* local_mem = "";
};

/// kBadInput for a dimension below 1; kResource for a block past the
/// device's dimensions, more threads than the kernel allows, or more local
/// memory than the device has. The message names the kernel and the
/// geometry, then the refusal and the API's name for it.
Status check_launch_geometry(const Kernel& kernel, const LaunchGeometry& g,
                             const DeviceLaunchLimits& limits = {}, const LaunchRefusalNames& names = {});

/// Which way a transfer goes (Device::write, Device::read).
enum class Transfer { kWrite, kRead };

/// kBadInput when `bytes` is more than the buffer's `buffer_bytes`.
Status check_transfer_size(Transfer direction, std::size_t bytes, std::size_t buffer_bytes);

}  // namespace kforge
