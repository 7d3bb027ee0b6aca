// Random streams, host tensors and argument records for operator workloads.
#include "generator/workload_builder.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/float_convert.hpp"

namespace kforge {

SplitMix64 tensor_stream(std::uint64_t seed, std::uint64_t tensor) {
  SplitMix64 mix(seed ^ (0xD1B54A32D192ED03ull * (tensor + 1)));
  return SplitMix64(mix.next());
}

namespace {

/// The integer `v` rounds to (nearest even), saturated to [lo, hi]; NaN,
/// which poisons an output, becomes `poison`, a value no kernel writes by chance.
template <class Int>
Int saturate(double v, Int poison) {
  if (std::isnan(v)) return poison;
  const double r = std::nearbyint(v);
  if (r <= static_cast<double>(std::numeric_limits<Int>::min())) return std::numeric_limits<Int>::min();
  if (r >= static_cast<double>(std::numeric_limits<Int>::max())) return std::numeric_limits<Int>::max();
  return static_cast<Int>(r);
}

template <class T>
void put(HostTensor& t, std::size_t i, T v) {
  std::memcpy(t.bytes.data() + sizeof(T) * i, &v, sizeof(T));
}

template <class T>
T get(const HostTensor& t, std::size_t i) {
  T v;
  std::memcpy(&v, t.bytes.data() + sizeof(T) * i, sizeof(T));
  return v;
}

}  // namespace

void store_value(HostTensor& t, std::size_t i, double v) {
  switch (t.dtype) {
    case Dtype::kF32:
      return put(t, i, static_cast<float>(v));
    case Dtype::kF16:
      return put(t, i, float_to_half_bits(static_cast<float>(v)));
    case Dtype::kBF16:
      return put(t, i, float_to_bf16_bits(static_cast<float>(v)));
    case Dtype::kF64:
      return put(t, i, v);
    case Dtype::kI32:
      return put(t, i, saturate<std::int32_t>(v, kPoisonI32));
    case Dtype::kI8:
      return put(t, i, saturate<std::int8_t>(v, kPoisonI8));
    case Dtype::kU8:
      return put(t, i, saturate<std::uint8_t>(v, kPoisonU8));
  }
}

double load_value(const HostTensor& t, std::size_t i) {
  switch (t.dtype) {
    case Dtype::kF32:
      return get<float>(t, i);
    case Dtype::kF16:
      return half_bits_to_float(get<std::uint16_t>(t, i));
    case Dtype::kBF16:
      return bf16_bits_to_float(get<std::uint16_t>(t, i));
    case Dtype::kF64:
      return get<double>(t, i);
    case Dtype::kI32:
      return get<std::int32_t>(t, i);
    case Dtype::kI8:
      return get<std::int8_t>(t, i);
    case Dtype::kU8:
      return get<std::uint8_t>(t, i);
  }
  return std::numeric_limits<double>::quiet_NaN();
}

void store_element(HostTensor& t, std::size_t i, float v) {
  store_value(t, i, v);
}

float load_element(const HostTensor& t, std::size_t i) {
  return static_cast<float>(load_value(t, i));
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
