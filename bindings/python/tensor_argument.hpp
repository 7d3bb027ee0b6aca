// A tensor handed to a launch (NumPy, PyTorch or anything with __dlpack__),
// checked against its argument in the operator's contract before anything
// is copied or launched: dtype, element count, C-contiguity and device.
#pragma once

#include <nanobind/ndarray.h>

#include <cstddef>
#include <string>

#include "generator/operator.hpp"

namespace kforge::python {

/// Any DLPack tensor, read-only allowed (outputs are checked for writability).
using AnyTensor = nanobind::ndarray<nanobind::ro>;

/// A tensor that passed its checks: its memory and size in bytes; in host
/// memory (copied) or, on the CUDA and HIP backends, in GPU memory of
/// device `device_id` (launched on in place).
struct CheckedTensor {
  const void* data = nullptr;
  std::size_t bytes = 0;
  bool writable = false;
  bool in_device_memory = false;
  int device_id = 0;
};

/// `tensor` as argument `index` (`spec`) of `op` on a device of `backend`,
/// or kBadInput naming the argument and what is wrong: a dtype other than
/// the contract's, an element count other than the contract's, strides that
/// are not C-contiguous, GPU memory of another backend (or any on OpenCL),
/// or a read-only output.
CheckedTensor check_tensor(const std::string& op, std::size_t index, const ArgumentSpec& spec,
                           const AnyTensor& tensor, bool writable, const std::string& backend);

/// "argument 3 'A' of gemm": how every launch error names its argument.
std::string argument_label(const std::string& op, std::size_t index, const ArgumentSpec& spec);

}  // namespace kforge::python
