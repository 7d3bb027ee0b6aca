// Random streams, host tensors and argument records for operator workloads.
#include "workload_builder.hpp"

#include <cstring>
#include <limits>

#include "float_convert.hpp"

namespace kforge {

SplitMix64 tensor_stream(std::uint64_t seed, std::uint64_t tensor) {
  SplitMix64 mix(seed ^ (0xD1B54A32D192ED03ull * (tensor + 1)));
  return SplitMix64(mix.next());
}

void store_element(HostTensor& t, std::size_t i, float v) {
  switch (t.dtype) {
    case Dtype::kF32:
      std::memcpy(t.bytes.data() + 4 * i, &v, 4);
      return;
    case Dtype::kF16: {
      const std::uint16_t h = float_to_half_bits(v);
      std::memcpy(t.bytes.data() + 2 * i, &h, 2);
      return;
    }
    case Dtype::kBF16: {
      const std::uint16_t h = float_to_bf16_bits(v);
      std::memcpy(t.bytes.data() + 2 * i, &h, 2);
      return;
    }
  }
}

float load_element(const HostTensor& t, std::size_t i) {
  if (t.dtype == Dtype::kF32) {
    float v;
    std::memcpy(&v, t.bytes.data() + 4 * i, 4);
    return v;
  }
  std::uint16_t h;
  std::memcpy(&h, t.bytes.data() + 2 * i, 2);
  return t.dtype == Dtype::kF16 ? half_bits_to_float(h) : bf16_bits_to_float(h);
}

HostTensor random_tensor(std::string name, Dtype dtype, std::size_t elements, SplitMix64 rng) {
  HostTensor t;
  t.name = std::move(name);
  t.dtype = dtype;
  t.bytes.resize(elements * dtype_bytes(dtype));
  for (std::size_t i = 0; i < elements; ++i) store_element(t, i, rng.symmetric_unit());
  return t;
}

HostTensor filled_tensor(std::string name, Dtype dtype, std::size_t elements, float v) {
  HostTensor t;
  t.name = std::move(name);
  t.dtype = dtype;
  t.bytes.resize(elements * dtype_bytes(dtype));
  for (std::size_t i = 0; i < elements; ++i) store_element(t, i, v);
  return t;
}

HostTensor zero_workspace(std::string name, std::size_t elements) {
  HostTensor t;
  t.name = std::move(name);
  t.dtype = Dtype::kF32;
  t.bytes.assign(elements * 4, 0);
  return t;
}

ArgumentSpec tensor_spec(std::string name, Dtype dtype, std::uint64_t elements, bool is_output) {
  ArgumentSpec a;
  a.kind = OperatorArg::Kind::kTensor;
  a.name = std::move(name);
  a.dtype = dtype;
  a.elements = elements;
  a.is_output = is_output;
  return a;
}

ArgumentSpec int_spec(std::string name, std::int64_t value) {
  ArgumentSpec a;
  a.kind = OperatorArg::Kind::kInt32;
  a.name = std::move(name);
  a.value = value;
  return a;
}

ArgumentSpec float_spec(std::string name) {
  ArgumentSpec a;
  a.kind = OperatorArg::Kind::kFloat32;
  a.name = std::move(name);
  return a;
}

OperatorArg scalar_i32(std::string name, std::int64_t v) {
  OperatorArg a;
  a.kind = OperatorArg::Kind::kInt32;
  a.name = std::move(name);
  a.i32 = static_cast<std::int32_t>(v);
  return a;
}

OperatorArg scalar_f32(std::string name, float v) {
  OperatorArg a;
  a.kind = OperatorArg::Kind::kFloat32;
  a.name = std::move(name);
  a.f32 = v;
  return a;
}

OperatorArg tensor_arg(std::string name, std::size_t index) {
  OperatorArg a;
  a.kind = OperatorArg::Kind::kTensor;
  a.name = std::move(name);
  a.tensor = index;
  return a;
}

float scalar_named(const Workload& w, std::string_view name) {
  for (const auto& a : w.args) {
    if (a.name == name && a.kind == OperatorArg::Kind::kFloat32) return a.f32;
  }
  return std::numeric_limits<float>::quiet_NaN();
}

std::size_t tensor_named(const Workload& w, std::string_view name) {
  for (std::size_t i = 0; i < w.tensors.size(); ++i) {
    if (w.tensors[i].name == name) return i;
  }
  return w.tensors.size();
}

}  // namespace kforge
