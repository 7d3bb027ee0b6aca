#include "runtime/kinds/kernel_signature.hpp"

#include <set>
#include <string>

namespace kforge {

namespace {

enum class TypeClass { kPointer, kInteger, kFloating, kUnknown };

TypeClass classify(const std::string& type) {
  static const std::set<std::string> integers = {"char",  "uchar", "unsigned char", "short", "ushort",
                                                 "unsigned short", "int", "uint", "unsigned int", "long",
                                                 "ulong", "unsigned long", "size_t", "bool"};
  static const std::set<std::string> floating = {"half", "float", "double"};
  if (!type.empty() && type.back() == '*') return TypeClass::kPointer;
  if (integers.count(type)) return TypeClass::kInteger;
  if (floating.count(type)) return TypeClass::kFloating;
  return TypeClass::kUnknown;
}

const char* kind_name(OperatorArg::Kind k) {
  switch (k) {
    case OperatorArg::Kind::kTensor: return "a buffer";
    case OperatorArg::Kind::kInt32: return "i32";
    case OperatorArg::Kind::kFloat32: return "f32";
  }
  return "?";
}

/// Whether a parameter of class `c` certainly cannot take an argument of kind `k`.
bool disagrees(OperatorArg::Kind k, TypeClass c) {
  if (c == TypeClass::kUnknown) return false;
  switch (k) {
    case OperatorArg::Kind::kTensor: return c != TypeClass::kPointer;
    case OperatorArg::Kind::kInt32: return c != TypeClass::kInteger;
    case OperatorArg::Kind::kFloat32: return c != TypeClass::kFloating;
  }
  return false;
}

}  // namespace

Status check_signature(const Kernel& kernel, const std::vector<ArgumentSpec>& args) {
  const std::vector<std::string> types = kernel.parameter_types();
  if (types.empty()) return ok_status();
  if (types.size() != args.size()) {
    return Error::bad_input("kernel " + kernel.name() + " takes " + std::to_string(types.size()) +
                            " parameters, but the operator passes " + std::to_string(args.size()) +
                            " arguments");
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!disagrees(args[i].kind, classify(types[i]))) continue;
    return Error::bad_input("argument " + std::to_string(i) + " '" + args[i].name + "' is declared " +
                            kind_name(args[i].kind) + ", but parameter " + std::to_string(i) + " of kernel " +
                            kernel.name() + " is '" + types[i] + "'");
  }
  return ok_status();
}

}  // namespace kforge
