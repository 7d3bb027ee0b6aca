// What tuning one problem holds in memory at once, and the check that it
// fits the device and the host before any input is generated: a problem too
// large is refused with the numbers, not attempted until std::bad_alloc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "generator/operator.hpp"
#include "runtime/device/device_info.hpp"
#include "runtime/device/host/host_memory.hpp"

namespace kforge {

/// Bytes a tuning run of one problem allocates (in one measuring process).
struct ProblemFootprint {
  /// Every tensor of both validation runs (poisoned-output and accumulate).
  std::uint64_t device_bytes = 0;
  /// The largest single tensor, which must fit one device allocation.
  std::uint64_t largest_tensor_bytes = 0;
  std::string largest_tensor;
  /// Host side: both runs' inputs, each run's double-precision reference
  /// (value and scale, 16 bytes per output element) and its read-back copy,
  /// and the reference's widened inputs (16 bytes per input element).
  std::uint64_t host_bytes = 0;
};

/// The footprint of a normalized problem, from Operator::arguments (nothing
/// allocated). Saturates instead of wrapping.
ProblemFootprint problem_footprint(const Operator& op, const Problem& p);

/// kBadInput when the footprint exceeds the device's largest allocation or
/// global memory, or the host memory available (where known); the message
/// names the problem and gives needed against available. On a CPU device
/// the device's buffers are host memory too, so they count against the host.
Status check_problem_fits(const ProblemFootprint& f, const Problem& p, const DeviceInfo& device,
                          const std::optional<HostMemory>& host);

/// "1.5 GiB", "12.0 MiB", "512 bytes".
std::string memory_size(std::uint64_t bytes);

}  // namespace kforge
