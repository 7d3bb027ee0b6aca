// A vendor library call in place of a compiled kernel: what a library
// template (manifest `library`) loads to. The device's launch() runs it, so
// validation, timing, the lookup and launches treat it as any kernel.
#pragma once

#include <string>
#include <vector>

#include "backend.hpp"

namespace kforge {

class LibraryKernel : public Kernel {
 public:
  /// Calls the library with the operator's arguments (the same list a
  /// kernel gets) and waits; returns the device time of the call in ms.
  /// `geometry` carries what the manifest's launch expressions give (batch
  /// on grid z).
  virtual Result<double> run(const std::vector<KernelArg>& args, const LaunchGeometry& geometry,
                             const OnRunning& on_running) = 0;
  ResourceReport resources() const override { return {}; }
};

}  // namespace kforge
