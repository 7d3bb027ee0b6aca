// The checks a tensor passes before a launch, each naming the argument.
#include "bindings/python/tensor_argument.hpp"

#include <vector>

#include "bindings/python/python_errors.hpp"
#include "generator/backend_traits.hpp"

namespace nb = nanobind;

namespace kforge::python {

namespace {

/// The kforge dtype a DLPack dtype is, or "" when kforge has none.
std::string dlpack_dtype_name(const nb::dlpack::dtype& d) {
  if (d.lanes != 1) return "";
  if (d.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float) && d.bits == 32) return "f32";
  if (d.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float) && d.bits == 16) return "f16";
  if (d.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Bfloat) && d.bits == 16) return "bf16";
  return "";
}

/// A dtype kforge has by its kforge name, another by NumPy's (float64,
/// int32, ...), so that a refusal names what the caller passed.
std::string describe_dtype(const nb::dlpack::dtype& d) {
  std::string name = dlpack_dtype_name(d);
  if (!name.empty()) return name;
  using Code = nb::dlpack::dtype_code;
  const std::string bits = std::to_string(d.bits);
  switch (static_cast<Code>(d.code)) {
    case Code::Int: name = "int" + bits; break;
    case Code::UInt: name = "uint" + bits; break;
    case Code::Float: name = "float" + bits; break;
    case Code::Bfloat: name = "bfloat" + bits; break;
    case Code::Complex: name = "complex" + bits; break;
    case Code::Bool: name = "bool"; break;
    default: return "DLPack code " + std::to_string(d.code) + " with " + bits + " bits";
  }
  return d.lanes == 1 ? name : name + "x" + std::to_string(d.lanes);
}

std::string shape_text(const AnyTensor& t) {
  std::string s = "(";
  for (std::size_t i = 0; i < t.ndim(); ++i) s += (i ? ", " : "") + std::to_string(t.shape(i));
  return s + (t.ndim() == 1 ? ",)" : ")");
}

/// "(8, 16)" for a contract's shape, leading dims of 1 left out.
std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::size_t first = 0;
  while (first + 1 < shape.size() && shape[first] == 1) ++first;
  std::string s = "(";
  for (std::size_t i = first; i < shape.size(); ++i) s += (i > first ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() - first == 1 ? ",)" : ")");
}

/// Whether `t` has the contract's shape: dims of extent 1 aside (they move
/// no element), or flat (a 1-D buffer of the right count), or any shape
/// where the contract states none.
bool fits_shape(const AnyTensor& t, const std::vector<std::uint64_t>& want) {
  if (want.empty() || t.ndim() <= 1) return true;
  std::vector<std::uint64_t> have, need;
  for (std::size_t i = 0; i < t.ndim(); ++i)
    if (t.shape(i) != 1) have.push_back(static_cast<std::uint64_t>(t.shape(i)));
  for (std::uint64_t d : want)
    if (d != 1) need.push_back(d);
  return have == need;
}

/// Row-major and packed; dims of extent 1 may carry any stride.
bool c_contiguous(const AnyTensor& t) {
  std::int64_t expected = 1;
  for (std::size_t i = t.ndim(); i-- > 0;) {
    if (t.shape(i) != 1 && t.stride(i) != expected) return false;
    expected *= static_cast<std::int64_t>(t.shape(i));
  }
  return true;
}

std::string device_text(const AnyTensor& t) {
  switch (t.device_type()) {
    case nb::device::cpu::value:
      return "cpu";
    case nb::device::cuda::value:
      return "cuda:" + std::to_string(t.device_id());
    case nb::device::cuda_host::value:
      return "cuda pinned host memory";
    case nb::device::rocm::value:
      return "rocm:" + std::to_string(t.device_id());
    default:
      return "DLPack device type " + std::to_string(t.device_type());
  }
}

/// Host memory a backend can copy from: CPU and pinned memory.
bool on_host(const AnyTensor& t) {
  return t.device_type() == nb::device::cpu::value || t.device_type() == nb::device::cuda_host::value;
}

/// GPU memory the backend launches on in place: CUDA memory on CUDA, ROCm
/// memory on HIP.
bool in_backend_memory(const AnyTensor& t, const std::string& backend) {
  return (t.device_type() == nb::device::cuda::value && is_backend(backend, BackendId::kCuda)) ||
         (t.device_type() == nb::device::rocm::value && is_backend(backend, BackendId::kHip));
}

void check_placement(const std::string& label, const AnyTensor& t, const std::string& backend) {
  if (on_host(t) || in_backend_memory(t, backend)) return;
  if (is_backend(backend, BackendId::kCuda) || is_backend(backend, BackendId::kHip)) {
    throw_bad_input(label + ": the tensor is in " + device_text(t) + " memory, which the " + backend +
                    " backend cannot launch on; move it to the CPU or to the " + backend + " device");
  }
  throw_bad_input(label + ": the tensor is in " + device_text(t) + " memory, but the device is on the " +
                  backend + " backend, which takes host tensors (copied); move it to the CPU first");
}

}  // namespace

std::string argument_label(const std::string& op, std::size_t index, const ArgumentSpec& spec) {
  return "argument " + std::to_string(index) + " '" + spec.name + "' of " + op;
}

CheckedTensor check_tensor(const std::string& op, std::size_t index, const ArgumentSpec& spec,
                           const AnyTensor& tensor, bool writable, const std::string& backend) {
  const std::string label = argument_label(op, index, spec);
  const std::string want_dtype(dtype_name(spec.dtype));
  if (dlpack_dtype_name(tensor.dtype()) != want_dtype) {
    throw_bad_input(label + ": dtype " + describe_dtype(tensor.dtype()) + ", expected " + want_dtype);
  }
  if (spec.accessed && tensor.size() != spec.elements) {
    throw_bad_input(label + ": shape " + shape_text(tensor) + " holds " + std::to_string(tensor.size()) +
                    " elements, expected " + std::to_string(spec.elements));
  }
  if (spec.accessed && !fits_shape(tensor, spec.shape)) {
    throw_bad_input(label + ": shape " + shape_text(tensor) + ", expected " + shape_text(spec.shape) +
                    " (the same elements in another shape, as a transposed operand, would be read wrongly)");
  }
  if (!c_contiguous(tensor)) {
    // A copy of an output would take the kernel's result, not the caller's tensor.
    throw_bad_input(label + ": the tensor of shape " + shape_text(tensor) + " is not C-contiguous " +
                    (spec.is_output ? "(an output is written in place: pass a contiguous tensor and copy it into "
                                      "the view afterwards)"
                                    : "(make a contiguous copy first)"));
  }
  check_placement(label, tensor, backend);
  if (spec.is_output && !writable) throw_bad_input(label + ": an output, but the array is read-only");
  return {tensor.data(), tensor.nbytes(), writable, in_backend_memory(tensor, backend),
          static_cast<int>(tensor.device_id())};
}

}  // namespace kforge::python
