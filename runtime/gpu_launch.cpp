// The error shape the CUDA and HIP devices share.
#include "gpu_launch.hpp"

#include "sticky_error.hpp"

namespace kforge {

Error driver_error(const std::string& what, const std::string& error_text, DriverFailure failure,
                   ErrorCode code) {
  const std::string text = what + ": " + error_text;
  switch (failure) {
    case DriverFailure::kSticky:
      return sticky_device_error(text, error_text);
    case DriverFailure::kOutOfResources:
      return Error{ErrorCode::kResource, text, {}};
    case DriverFailure::kOther:
      break;
  }
  return Error{code, text, {}};
}

}  // namespace kforge
