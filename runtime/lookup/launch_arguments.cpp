// Launch arguments against the operator's contract, before anything reaches
// the device: a short buffer is an error here, not an out-of-bounds write.
#include "runtime/lookup/launch_arguments.hpp"

#include <string>

namespace kforge {

namespace {

std::string_view kind_name(KernelArg::Kind k) {
  switch (k) {
    case KernelArg::Kind::kBuffer:
      return "a buffer";
    case KernelArg::Kind::kInt32:
      return "an int32";
    case KernelArg::Kind::kFloat32:
      return "a float32";
  }
  return "an unknown kind";
}

KernelArg::Kind kind_of(OperatorArg::Kind k) {
  switch (k) {
    case OperatorArg::Kind::kTensor:
      return KernelArg::Kind::kBuffer;
    case OperatorArg::Kind::kInt32:
      return KernelArg::Kind::kInt32;
    case OperatorArg::Kind::kFloat32:
      return KernelArg::Kind::kFloat32;
  }
  return KernelArg::Kind::kBuffer;
}

std::string names(const std::vector<ArgumentSpec>& contract) {
  std::string s;
  for (const auto& a : contract) s += (s.empty() ? "" : ", ") + a.name;
  return s;
}

/// "4096 elements of f16, 8192 bytes"
std::string tensor_size(const ArgumentSpec& a) {
  return std::to_string(a.elements) + " elements of " + std::string(dtype_name(a.dtype)) + ", " +
         std::to_string(a.bytes()) + " bytes";
}

}  // namespace

Status check_launch_arguments(std::string_view op, const std::vector<ArgumentSpec>& contract,
                              const std::vector<KernelArg>& args) {
  // Every launch passes here: the messages are built only for a mismatch.
  const auto who = [&] { return std::string(op) + " launch: "; };
  if (args.size() != contract.size()) {
    return Error::bad_input(who() + std::to_string(args.size()) + " arguments given, " + std::string(op) +
                            " takes " + std::to_string(contract.size()) + " (" + names(contract) + ")");
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgumentSpec& want = contract[i];
    const KernelArg& got = args[i];
    const auto arg = [&] { return "argument " + std::to_string(i) + " (" + want.name + ")"; };
    const KernelArg::Kind expected = kind_of(want.kind);
    if (got.kind != expected) {
      return Error::bad_input(who() + arg() + " must be " + std::string(kind_name(expected)) + ", got " +
                              std::string(kind_name(got.kind)));
    }
    if (got.kind == KernelArg::Kind::kBuffer) {
      if (got.buffer == nullptr) return Error::bad_input(who() + arg() + " has no buffer");
      if (want.accessed && got.buffer->size() < want.bytes()) {
        return Error::bad_input(who() + arg() + " needs " + tensor_size(want) + "; the buffer holds " +
                                std::to_string(got.buffer->size()) + " bytes");
      }
    } else if (got.kind == KernelArg::Kind::kInt32 && want.value && got.i32 != *want.value) {
      return Error::bad_input(who() + arg() + " is " + std::to_string(got.i32) + ", the selected problem has " +
                              want.name + " = " + std::to_string(*want.value));
    }
  }
  return ok_status();
}

}  // namespace kforge
