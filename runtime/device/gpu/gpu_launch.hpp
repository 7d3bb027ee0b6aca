// What the CUDA and HIP devices share around a launch: the shape of a driver
// error, the kernel parameters as both launch calls take them, the module
// global that names a kernel's dynamic shared memory, and the checks of a
// launch against a foreign kernel's ABI (launch_abi.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "runtime/device/backend.hpp"
#include "runtime/device/launch_abi.hpp"

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
/// one pointer per argument, to its value, then one per `trailing` device
/// address (a Triton kernel's scratch). `BufferT::ptr()` gives a buffer's
/// device address. The values live here and in the arguments.
template <typename DevicePtr>
class PackedArgs {
 public:
  template <typename BufferT>
  static PackedArgs of(const std::vector<KernelArg>& args, const std::vector<DevicePtr>& trailing = {}) {
    PackedArgs p(args.size() + trailing.size());
    for (std::size_t i = 0; i < trailing.size(); ++i) {
      p.pointers_[args.size() + i] = trailing[i];
      p.params_[args.size() + i] = &p.pointers_[args.size() + i];
    }
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

/// kBadInput unless `args` match the ABI's parameters one for one: a buffer
/// for each pointer, an int32 for i32/u32, a float for fp32 (kforge passes
/// no other scalar types); the message names the kernel and the parameter.
Status check_abi_arguments(const LaunchAbi& abi, const std::vector<KernelArg>& args, const std::string& kernel);

/// The kernel's arguments built from the caller's through the ABI's
/// argument_map (the caller's as they are where it has none); kBadInput
/// naming the kernel where the map reads past them. A workspace's slot is
/// its buffer in `workspaces` (the ABI's order); without them, a buffer
/// argument with no buffer, which passes check_abi_arguments and must be
/// filled before the launch.
Result<std::vector<KernelArg>> abi_arguments(const LaunchAbi& abi, const std::vector<KernelArg>& args,
                                             const std::string& kernel, const std::vector<Buffer*>& workspaces = {});

/// kBadInput unless the block has the ABI's threads (Triton: num_warps x
/// warp size), whose compiler laid the kernel out for exactly that many.
Status check_abi_block(const LaunchAbi& abi, const LaunchGeometry& g, const std::string& kernel);

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
