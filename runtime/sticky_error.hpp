// How a backend marks a device error after which its context is unusable
// (CUDA/HIP illegal address, launch failure, ECC error): every later call on
// that context fails, so the tuner must restart its worker process.
#pragma once

#include <string>
#include <string_view>

#include "result.hpp"

namespace kforge {

/// Prefix of Error::context for sticky device errors.
inline constexpr std::string_view kStickyErrorMarker = "sticky device error";

/// A kLaunch error marked sticky; `detail` says what the driver reported.
inline Error sticky_device_error(const std::string& message, const std::string& detail) {
  return Error{ErrorCode::kLaunch, message,
               std::string(kStickyErrorMarker) + ": the device context is unusable; restart the process (" +
                   detail + ")"};
}

/// True for errors made by sticky_device_error.
inline bool is_sticky_device_error(const Error& e) {
  return e.context.rfind(kStickyErrorMarker, 0) == 0;
}

}  // namespace kforge
