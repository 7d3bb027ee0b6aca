#include "runtime/kinds/kernel_origin.hpp"

namespace kforge {

std::string_view name(KernelOrigin origin) {
  switch (origin) {
    case KernelOrigin::kCompiled:
      return "compiled";
    case KernelOrigin::kDisk:
      return "disk";
    case KernelOrigin::kAhead:
      return "ahead";
    case KernelOrigin::kLibrary:
      return "library";
    case KernelOrigin::kMemory:
      return "memory";
  }
  return "compiled";
}

}  // namespace kforge
