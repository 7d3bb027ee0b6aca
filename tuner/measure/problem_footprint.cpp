// The memory a tuning run of one problem needs, against what there is
// (problem_footprint.hpp).
#include "tuner/measure/problem_footprint.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace kforge {

namespace {

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<std::uint64_t>::max() : sum;
}

constexpr std::uint64_t kValidationRuns = 2;  // poisoned-output and accumulate

}  // namespace

ProblemFootprint problem_footprint(const Operator& op, const Problem& p) {
  ProblemFootprint f;
  std::uint64_t tensors = 0, outputs = 0, inputs = 0;
  for (const ArgumentSpec& a : op.arguments(p)) {
    if (a.kind != OperatorArg::Kind::kTensor) continue;
    const std::uint64_t bytes = std::max<std::uint64_t>(a.bytes(), 4);  // the runner's smallest buffer
    tensors = saturating_add(tensors, bytes);
    if (a.is_output)
      outputs = saturating_add(outputs, a.elements);
    else
      inputs = saturating_add(inputs, a.elements);
    if (bytes > f.largest_tensor_bytes) {
      f.largest_tensor_bytes = bytes;
      f.largest_tensor = a.name;
    }
  }
  f.device_bytes = saturating_product({tensors, kValidationRuns});
  // Per run: its host tensors, reference (value and scale) and read-back
  // floats; once: the reference's widened inputs.
  const std::uint64_t per_run = saturating_add(tensors, saturating_product({outputs, 16 + 4}));
  f.host_bytes =
      saturating_add(saturating_product({per_run, kValidationRuns}), saturating_product({inputs, 16}));
  return f;
}

std::string memory_size(std::uint64_t bytes) {
  char text[64];
  const double b = static_cast<double>(bytes);
  if (bytes >= (std::uint64_t{1} << 30))
    std::snprintf(text, sizeof text, "%.1f GiB", b / (1u << 30));
  else if (bytes >= (std::uint64_t{1} << 20))
    std::snprintf(text, sizeof text, "%.1f MiB", b / (1u << 20));
  else
    std::snprintf(text, sizeof text, "%llu bytes", static_cast<unsigned long long>(bytes));
  return text;
}

Status check_problem_fits(const ProblemFootprint& f, const Problem& p, const DeviceInfo& device,
                          const std::optional<HostMemory>& host) {
  const std::string who = "problem " + p.key() + ": ";
  const std::string on = device.selector.empty() ? device.name : device.selector + " (" + device.name + ")";
  const auto max_alloc = static_cast<std::uint64_t>(device.max_alloc_bytes > 0 ? device.max_alloc_bytes : 0);
  if (max_alloc > 0 && f.largest_tensor_bytes > max_alloc) {
    return Error::bad_input(who + "tensor " + f.largest_tensor + " needs " +
                            memory_size(f.largest_tensor_bytes) + " of device memory in one buffer; " + on +
                            " allows at most " + memory_size(max_alloc) + " per allocation");
  }
  const auto global = static_cast<std::uint64_t>(device.global_mem_bytes > 0 ? device.global_mem_bytes : 0);
  if (global > 0 && f.device_bytes > global) {
    return Error::bad_input(who + "needs " + memory_size(f.device_bytes) +
                            " of device memory (every tensor, for two validation runs); " + on + " has " +
                            memory_size(global));
  }
  if (host) {
    const bool cpu = device.device_type == DeviceType::kCpu;
    const std::uint64_t needed = cpu ? saturating_add(f.host_bytes, f.device_bytes) : f.host_bytes;
    if (needed > host->available_bytes) {
      return Error::bad_input(who + "needs " + memory_size(needed) +
                              " of host memory (inputs, double-precision references and read-back copies" +
                              (cpu ? std::string(", and the CPU device's buffers") : std::string()) + "); " +
                              memory_size(host->available_bytes) + " are available (" + host->source + ")");
    }
  }
  return ok_status();
}

}  // namespace kforge
