// Where a built kernel's binary came from: what the lookup's PreparedKernel
// and a template kind's KernelBuild report.
#pragma once

#include <string_view>

namespace kforge {

enum class KernelOrigin {
  kCompiled,  ///< compiled for this build
  kDisk,      ///< read from the binary cache
  kAhead,     ///< compiled ahead of its turn (the tuner's compile queue)
  kLibrary,   ///< a library call, bound: no binary
  kMemory,    ///< loaded already for another problem (the lookup)
};

/// "compiled", "disk", "ahead", "library" or "memory".
std::string_view name(KernelOrigin origin);

}  // namespace kforge
