// A selection ready to launch from Python: compiled once (Lookup::prepare),
// with one device buffer per host tensor argument allocated at the first
// launch and reused by every later one, so a launch costs the checks, the
// copies and the kernel. Host tensors are copied into the buffers before the
// launch and outputs copied back into their tensors after it; a tensor
// already in the CUDA or HIP device's memory is launched on in place
// (ForeignMemory), with no copy.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bindings/python/tensor_argument.hpp"
#include "runtime/device/foreign_memory.hpp"
#include "runtime/lookup/lookup.hpp"

namespace kforge::python {

class BoundKernel {
 public:
  BoundKernel(Lookup& lookup, Selection selection);
  BoundKernel(const BoundKernel&) = delete;
  BoundKernel& operator=(const BoundKernel&) = delete;

  /// Launches with the contract's arguments, positionally in its order, then
  /// by name; an int32 dim the problem fixes (gemm's M) may be left out, and
  /// so may a tensor the kernel does not access (or None). Every argument
  /// is checked first (tensor_argument.hpp, launch_arguments.hpp): a wrong
  /// one is kBadInput naming it and nothing is launched. With host tensors
  /// (copied in and out), waits for the kernel and returns its device time
  /// in ms. With every tensor in the device's memory, enqueues the kernel
  /// and returns None without waiting, as a CUDA launch does. The keyword
  /// `stream` (CUDA and HIP only: an int handle or an object with
  /// .cuda_stream) launches on the caller's stream, after the work queued
  /// on it; without it, a launch on device tensors first waits for all the
  /// device's work.
  std::optional<double> launch(const nanobind::args& args, const nanobind::kwargs& kwargs);

  const Selection& selection() const { return selection_; }
  const std::vector<ArgumentSpec>& arguments() const { return prepared_->arguments; }
  const PreparedKernel& prepared() const { return *prepared_; }

 private:
  /// One handle per contract argument (null where none was given).
  std::vector<nanobind::handle> in_contract_order(const nanobind::args& args,
                                                  const nanobind::kwargs& kwargs) const;
  /// The device buffer of argument `index`, allocated at its first use.
  Buffer& buffer(std::size_t index);
  KernelArg scalar(std::size_t index, nanobind::handle value) const;
  struct TensorUse;
  /// Tensor argument `index` as the kernel takes it: a device tensor's own
  /// memory (borrowed from `foreign`), else its buffer with a host tensor
  /// copied in.
  KernelArg stage(std::size_t index, TensorUse& use, ForeignMemory* foreign);
  /// The caller's stream from the keyword `stream`; none where absent or None.
  std::optional<std::uintptr_t> caller_stream(const nanobind::kwargs& kwargs);

  Lookup& lookup_;
  Selection selection_;
  const PreparedKernel* prepared_ = nullptr;
  std::vector<std::unique_ptr<Buffer>> buffers_;  ///< by contract index
  std::mutex launch_mutex_;                       ///< one copy-launch-copy at a time: the buffers are shared
};

}  // namespace kforge::python
