// What the CUDA and HIP devices share around a launch: the shape of a driver
// error, the kernel parameters as both launch calls take them, and the
// module global that names a kernel's dynamic shared memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "backend.hpp"
#include "result.hpp"

namespace kforge {

/// What kind of failure a driver call reported.
enum class DriverFailure {
  kSticky,          ///< the context is unusable (sticky_error.hpp)
  kOutOfResources,  ///< out of memory, or too many resources for a launch
  kOther,
};

/// A driver error as kforge's Error: "<what>: <error_text>", sticky ones
/// marked, resource refusals kResource, everything else `code`.
Error driver_error(const std::string& what, const std::string& error_text, DriverFailure failure,
                   ErrorCode code = ErrorCode::kLaunch);

/// Kernel parameters as cuLaunchKernel and hipModuleLaunchKernel take them:
/// one pointer per argument, to its value. `BufferT::ptr()` gives a
/// buffer's device address. The values live here and in the arguments.
template <typename DevicePtr>
class PackedArgs {
 public:
  template <typename BufferT>
  static PackedArgs of(const std::vector<KernelArg>& args) {
    PackedArgs p(args.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
      switch (args[i].kind) {
        case KernelArg::Kind::kBuffer:
          p.pointers_[i] = static_cast<BufferT*>(args[i].buffer)->ptr();
          p.params_[i] = &p.pointers_[i];
          break;
        case KernelArg::Kind::kInt32:
          p.params_[i] = const_cast<std::int32_t*>(&args[i].i32);
          break;
        case KernelArg::Kind::kFloat32:
          p.params_[i] = const_cast<float*>(&args[i].f32);
          break;
      }
    }
    return p;
  }
  PackedArgs(PackedArgs&&) = default;  // the vectors' storage, which params_ points into, moves along
  PackedArgs(const PackedArgs&) = delete;
  PackedArgs& operator=(const PackedArgs&) = delete;
  void** params() { return params_.data(); }

 private:
  explicit PackedArgs(std::size_t n) : pointers_(n), params_(n) {}
  std::vector<DevicePtr> pointers_;
  std::vector<void*> params_;
};

/// The module global in which a template that needs dynamic shared memory
/// says how much (KF_DYNAMIC_SHARED_BYTES in the prelude).
inline constexpr const char* kDynamicSharedSymbol = "kf_dynamic_shared_bytes";

/// The bytes a module's kDynamicSharedSymbol holds, 0 where it has none.
/// `find(&address, &size)` looks the global up (true when found);
/// `copy(&value, address)` reads it to the host, a Status.
template <typename Address, typename Find, typename Copy>
Result<int> module_dynamic_shared_bytes(Find find, Copy copy) {
  Address address{};
  std::size_t size = 0;
  int bytes = 0;
  if (!find(&address, &size) || size != sizeof(int)) return 0;
  KF_TRY(copy(&bytes, address));
  return bytes;
}

}  // namespace kforge
