// The error shape the CUDA and HIP devices share, and the checks of a
// launch against a foreign kernel's ABI.
#include "runtime/device/gpu/gpu_launch.hpp"

#include "runtime/device/sticky_error.hpp"

namespace kforge {

namespace {

std::string_view kind_text(KernelArg::Kind kind) {
  switch (kind) {
    case KernelArg::Kind::kBuffer:
      return "a buffer";
    case KernelArg::Kind::kInt32:
      return "an int32";
    case KernelArg::Kind::kFloat32:
      return "a float";
  }
  return "an argument";
}

/// Whether an argument of `kind` fills a parameter of Triton type `type`.
bool fills(KernelArg::Kind kind, const AbiParameter& p) {
  switch (kind) {
    case KernelArg::Kind::kBuffer:
      return p.pointer;
    case KernelArg::Kind::kInt32:
      return p.type == "i32" || p.type == "u32";
    case KernelArg::Kind::kFloat32:
      return p.type == "fp32";
  }
  return false;
}

}  // namespace

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

Status check_abi_arguments(const LaunchAbi& abi, const std::vector<KernelArg>& args, const std::string& kernel) {
  if (args.size() != abi.parameters.size()) {
    return Error::bad_input(kernel + " takes " + std::to_string(abi.parameters.size()) + " arguments (" +
                            abi.compiler + "), " + std::to_string(args.size()) + " given");
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    const AbiParameter& p = abi.parameters[i];
    if (fills(args[i].kind, p)) continue;
    return Error::bad_input(kernel + ": argument " + std::to_string(i) + " (" + p.name + ") is " +
                            std::string(kind_text(args[i].kind)) + " for a parameter of type " + p.type);
  }
  return ok_status();
}

Result<std::vector<KernelArg>> abi_arguments(const LaunchAbi& abi, const std::vector<KernelArg>& args,
                                             const std::string& kernel, const std::vector<Buffer*>& workspaces) {
  if (abi.argument_map.empty()) return args;
  std::vector<KernelArg> out;
  out.reserve(abi.argument_map.size());
  for (const AbiArgument& a : abi.argument_map) {
    if (a.workspace >= 0) {
      KernelArg slot;
      slot.kind = KernelArg::Kind::kBuffer;
      if (static_cast<std::size_t>(a.workspace) < workspaces.size()) slot.buffer = workspaces[a.workspace];
      out.push_back(slot);
    } else if (a.from < 0) {
      out.push_back(KernelArg::of(a.value));
    } else if (static_cast<std::size_t>(a.from) < args.size()) {
      out.push_back(args[static_cast<std::size_t>(a.from)]);
    } else {
      return Error::bad_input(kernel + " takes the caller's argument " + std::to_string(a.from) + ", " +
                              std::to_string(args.size()) + " given");
    }
  }
  return out;
}

Status check_abi_block(const LaunchAbi& abi, const LaunchGeometry& g, const std::string& kernel) {
  const std::int64_t threads = g.block[0] * g.block[1] * g.block[2];
  if (threads == abi.block_threads) return ok_status();
  return Error::bad_input(kernel + " runs " + std::to_string(abi.block_threads) + " threads per block (" +
                          abi.compiler + " laid it out for num_warps x warp size); the launch asked " +
                          std::to_string(threads));
}

}  // namespace kforge
