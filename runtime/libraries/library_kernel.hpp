// A vendor library call in place of a compiled kernel: what a library
// template (manifest `library`) loads to. The device's launch() runs it and
// its enqueue() enqueues it, so validation, timing, the lookup and launches
// treat it as any kernel.
#pragma once

#include <string>
#include <vector>

#include "runtime/device/backend.hpp"

namespace kforge {

class LibraryKernel : public Kernel {
 public:
  /// Calls the library with the operator's arguments (the same list a
  /// kernel gets) and waits; returns the device time of the call in ms.
  /// `geometry` carries what the manifest's launch expressions give (batch
  /// on grid z).
  virtual Result<double> run(const std::vector<KernelArg>& args, const LaunchGeometry& geometry,
                             const OnRunning& on_running) = 0;
  /// Enqueues the same call on the device's queue or stream and returns
  /// without waiting (Device::enqueue).
  virtual Status enqueue(const std::vector<KernelArg>& args, const LaunchGeometry& geometry) = 0;
  ResourceReport resources() const override { return {}; }
  /// What the library chose for this call where a configuration leaves it
  /// a choice (cuBLASLt's algorithm: its configuration fields and
  /// workspace), stored with the candidate's result under "library_call"
  /// so that the runtime binds exactly that one again; null where the
  /// configuration says everything (CLBlast).
  virtual nlohmann::json call_identity() const { return nullptr; }
};

}  // namespace kforge
