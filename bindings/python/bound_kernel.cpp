// Argument resolution, checks and the launch of a BoundKernel: host tensors
// copied in and out, device tensors borrowed in place.
#include "bindings/python/bound_kernel.hpp"

#include <nanobind/stl/string.h>

#include <limits>
#include <optional>

#include "bindings/python/python_errors.hpp"
#include "runtime/device/foreign_memory.hpp"

namespace nb = nanobind;

namespace kforge::python {

namespace {

/// A tensor argument as it will be launched: its checked memory, if any.
std::string python_type_name(nb::handle h) {
  return nb::type_name(h.type()).c_str();
}

/// The keyword a launch takes besides the contract's: the caller's stream.
constexpr const char* kStreamKeyword = "stream";

/// `value` of stream=: an int (a CUstream or hipStream_t, 0 the legacy
/// default stream) or an object with one as `cuda_stream` (torch.cuda.Stream).
std::uintptr_t stream_handle(const std::string& op, nb::handle value) {
  nb::handle h = value;
  if (nb::hasattr(value, "cuda_stream")) h = value.attr("cuda_stream");
  std::uint64_t s = 0;
  if (!nb::try_cast(h, s)) {
    throw_bad_input(op + ": stream: expected an int or an object with .cuda_stream, got " +
                    python_type_name(value));
  }
  return static_cast<std::uintptr_t>(s);
}

}  // namespace

struct BoundKernel::TensorUse {
  std::optional<AnyTensor> tensor;  ///< kept alive until the launch returns
  CheckedTensor checked;
  std::unique_ptr<Buffer> borrowed;  ///< over the tensor's own memory, where it is on the device
};

BoundKernel::BoundKernel(Lookup& lookup, Selection selection)
    : lookup_(lookup), selection_(std::move(selection)) {
  prepared_ = unwrap(lookup_.prepare(selection_));
  buffers_.resize(prepared_->arguments.size());
}

std::vector<nb::handle> BoundKernel::in_contract_order(const nb::args& args, const nb::kwargs& kwargs) const {
  const auto& contract = arguments();
  const std::string& op = selection_.problem.op;
  if (args.size() > contract.size()) {
    throw_bad_input(op + ": " + std::to_string(args.size()) + " positional arguments, the contract has " +
                    std::to_string(contract.size()));
  }
  std::vector<nb::handle> out(contract.size());
  for (std::size_t i = 0; i < args.size(); ++i) out[i] = args[i];
  for (auto [key, value] : kwargs) {
    std::string name = nb::cast<std::string>(key);
    if (name == kStreamKeyword) continue;
    std::size_t i = 0;
    while (i < contract.size() && contract[i].name != name) ++i;
    if (i == contract.size()) throw_bad_input(op + ": no argument named '" + name + "'");
    if (out[i].is_valid()) throw_bad_input(argument_label(op, i, contract[i]) + ": given twice");
    out[i] = value;
  }
  return out;
}

Buffer& BoundKernel::buffer(std::size_t index) {
  if (!buffers_[index]) {
    // A buffer the kernel does not access still needs a valid handle.
    const std::uint64_t bytes = std::max<std::uint64_t>(arguments()[index].bytes(), 4);
    buffers_[index] = unwrap(lookup_.device().allocate(static_cast<std::size_t>(bytes)));
  }
  return *buffers_[index];
}

KernelArg BoundKernel::scalar(std::size_t index, nb::handle value) const {
  const ArgumentSpec& spec = arguments()[index];
  const std::string label = argument_label(selection_.problem.op, index, spec);
  if (spec.kind == OperatorArg::Kind::kInt32) {
    if (!value.is_valid() && spec.value) return KernelArg::of(static_cast<std::int32_t>(*spec.value));
    std::int64_t v = 0;
    if (!value.is_valid() || !nb::try_cast(value, v)) {
      throw_bad_input(label + ": expected an int" +
                      (value.is_valid() ? ", got " + python_type_name(value) : ""));
    }
    if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())
      throw_bad_input(label + ": " + std::to_string(v) + " does not fit in int32");
    return KernelArg::of(static_cast<std::int32_t>(v));  // a dim's value is checked by the launch
  }
  double v = 0;
  if (!value.is_valid() || !nb::try_cast(value, v)) {
    throw_bad_input(label + ": expected a float" +
                    (value.is_valid() ? ", got " + python_type_name(value) : ""));
  }
  return KernelArg::of(static_cast<float>(v));
}

std::optional<std::uintptr_t> BoundKernel::caller_stream(const nb::kwargs& kwargs) {
  if (!kwargs.contains(kStreamKeyword) || kwargs[kStreamKeyword].is_none()) return std::nullopt;
  const std::string& op = selection_.problem.op;
  if (!foreign_memory(lookup_.device())) {
    throw_bad_input(op + ": stream: the " + lookup_.device().info().backend +
                    " backend launches on its own queue; stream= is for the CUDA and HIP backends");
  }
  return stream_handle(op, kwargs[kStreamKeyword]);
}

KernelArg BoundKernel::stage(std::size_t index, TensorUse& use, ForeignMemory* foreign) {
  if (use.tensor && use.checked.in_device_memory) {
    // check_tensor admits device memory only where the device has ForeignMemory.
    use.borrowed = unwrap(foreign->borrow(reinterpret_cast<std::uintptr_t>(use.checked.data),
                                          use.checked.bytes, use.checked.device_id));
    return KernelArg::of(*use.borrowed);
  }
  Buffer& b = buffer(index);
  if (use.tensor) unwrap(lookup_.device().write(b, use.checked.data, use.checked.bytes));
  return KernelArg::of(b);
}

std::optional<double> BoundKernel::launch(const nb::args& args, const nb::kwargs& kwargs) {
  const auto& contract = arguments();
  const std::string& op = selection_.problem.op;
  const std::string& backend = lookup_.device().info().backend;
  std::vector<nb::handle> given = in_contract_order(args, kwargs);
  std::vector<KernelArg> kernel_args(contract.size());
  std::vector<TensorUse> tensors(contract.size());
  for (std::size_t i = 0; i < contract.size(); ++i) {
    const ArgumentSpec& spec = contract[i];
    if (spec.kind != OperatorArg::Kind::kTensor) {
      kernel_args[i] = scalar(i, given[i]);
      continue;
    }
    if (!given[i].is_valid() || given[i].is_none()) {
      if (spec.accessed) throw_bad_input(argument_label(op, i, spec) + ": missing (expected a tensor)");
      continue;
    }
    nb::ndarray<> writable_view;
    AnyTensor view;
    const bool writable = nb::try_cast(given[i], writable_view);
    if (writable)
      view = AnyTensor(writable_view);
    else if (!nb::try_cast(given[i], view))
      throw_bad_input(argument_label(op, i, spec) + ": expected a tensor, got " + python_type_name(given[i]));
    tensors[i].checked = check_tensor(op, i, spec, view, writable, backend);
    if (spec.accessed) tensors[i].tensor = std::move(view);
  }
  const std::optional<std::uintptr_t> stream = caller_stream(kwargs);
  nb::gil_scoped_release release;
  std::lock_guard<std::mutex> lock(launch_mutex_);
  ForeignMemory* foreign = foreign_memory(lookup_.device());
  bool in_place = false, copied = false;
  for (std::size_t i = 0; i < contract.size(); ++i) {
    if (contract[i].kind != OperatorArg::Kind::kTensor) continue;
    kernel_args[i] = stage(i, tensors[i], foreign);
    in_place = in_place || tensors[i].borrowed;
    copied = copied || (tensors[i].tensor && !tensors[i].borrowed);
  }
  // Without the caller's stream, the device's own waits for all the caller queued.
  if (in_place && !stream) unwrap(lookup_.device().synchronize());
  CallerStream on_callers(stream ? foreign : nullptr, stream.value_or(0));
  if (!copied) {
    unwrap(lookup_.enqueue(selection_, kernel_args));
    return std::nullopt;
  }
  const double ms = unwrap(lookup_.launch(selection_, kernel_args));
  for (std::size_t i = 0; i < contract.size(); ++i) {
    const TensorUse& t = tensors[i];
    if (t.tensor && contract[i].is_output && !t.checked.in_device_memory) {
      unwrap(
          lookup_.device().read(*kernel_args[i].buffer, const_cast<void*>(t.checked.data), t.checked.bytes));
    }
  }
  return ms;
}

}  // namespace kforge::python
