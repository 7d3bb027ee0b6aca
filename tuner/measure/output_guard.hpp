// Guard zones past every output: bytes of a known pattern after the output's
// last element, checked after each validation run, so that a kernel writing
// past its output's end (y[n], y[n+1]) fails validation naming the output
// instead of passing unseen.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "runtime/device/backend.hpp"

namespace kforge {

/// Bytes of guard after each output: past one tile of any template's
/// threads, small beside the output itself.
inline constexpr std::size_t kOutputGuardBytes = 4096;

/// Writes `bytes` of `data` followed by the guard into `buf` (allocated with
/// at least bytes + kOutputGuardBytes).
Status write_guarded(Device& device, Buffer& buf, const void* data, std::size_t bytes);

/// "written past its end: guard byte 0 of 4096 changed (at byte 1024 of the
/// buffer)", or "" when the guard after `bytes` of `buf` is intact. A changed
/// guard is restored, so the next run starts clean. `scratch` is reused.
Result<std::string> check_guard(Device& device, Buffer& buf, std::size_t bytes, std::vector<unsigned char>& scratch);

}  // namespace kforge
