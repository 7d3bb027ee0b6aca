// Argument resolution, checks and the copy-launch-copy of a BoundKernel.
#include "bound_kernel.hpp"

#include <nanobind/stl/string.h>

#include <limits>
#include <optional>

#include "python_errors.hpp"

namespace nb = nanobind;

namespace kforge::python {

namespace {

/// A tensor argument as it will be launched: its checked memory, if any.
struct TensorUse {
  std::optional<AnyTensor> tensor;  ///< kept alive until the launch returns
  CheckedTensor checked;
};

std::string python_type_name(nb::handle h) {
  return nb::type_name(h.type()).c_str();
}

}  // namespace

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

double BoundKernel::launch(const nb::args& args, const nb::kwargs& kwargs) {
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
    kernel_args[i] = KernelArg::of(buffer(i));
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
  nb::gil_scoped_release release;
  std::lock_guard<std::mutex> lock(launch_mutex_);
  for (std::size_t i = 0; i < contract.size(); ++i) {
    if (tensors[i].tensor)
      unwrap(
          lookup_.device().write(*kernel_args[i].buffer, tensors[i].checked.data, tensors[i].checked.bytes));
  }
  const double ms = unwrap(lookup_.launch(selection_, kernel_args));
  for (std::size_t i = 0; i < contract.size(); ++i) {
    if (tensors[i].tensor && contract[i].is_output) {
      unwrap(lookup_.device().read(*kernel_args[i].buffer, const_cast<void*>(tensors[i].checked.data),
                                   tensors[i].checked.bytes));
    }
  }
  return ms;
}

}  // namespace kforge::python
