// How a backend marks a device error after which its context is unusable
// (CUDA/HIP illegal address, launch failure, ECC error): every later call on
// that context fails, so the tuner must restart its worker process.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"

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

/// A device's last sticky error, after which every call on its context
/// fails with it again.
class StickyError {
 public:
  /// The sticky error, or ok while there is none.
  Status check() const {
    if (error_) return *error_;
    return ok_status();
  }
  /// Passes `e` on, remembering it when it is sticky.
  Error note(Error e) {
    if (is_sticky_device_error(e)) error_ = e;
    return e;
  }

 private:
  std::optional<Error> error_;
};

}  // namespace kforge
