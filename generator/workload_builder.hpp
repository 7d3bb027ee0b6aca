// Building blocks of operator workloads: a portable random stream, host
// tensors in any dtype (filled, random, poisoned), element access through
// float, and kernel-argument records. Every operator's make_workload uses
// these, so inputs are reproducible from a seed on every machine.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "generator/operator.hpp"

namespace kforge {

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, portable, the same stream everywhere.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t state) : s_(state) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in (-1, 1), never zero: (2r + 1 - 2^24) / 2^24 for a 24-bit r, exact in f32.
  float symmetric_unit() {
    const auto r = static_cast<std::int64_t>(next() >> 40);
    return static_cast<float>(2 * r + 1 - (std::int64_t{1} << 24)) / 16777216.0f;
  }

 private:
  std::uint64_t s_;
};

/// An independent stream per tensor: the tensor index is hashed into the seed.
SplitMix64 tensor_stream(std::uint64_t seed, std::uint64_t tensor);

/// What an unwritten integer output holds: a poisoned output's NaN stored in
/// an integer dtype (0xA5A5A5A5, 0xA5 as i8 and as u8).
inline constexpr std::int32_t kPoisonI32 = -1515870811;
inline constexpr std::int8_t kPoisonI8 = -91;
inline constexpr std::uint8_t kPoisonU8 = 165;

/// Stores `v` rounded to the tensor's dtype (nearest even; integers saturate,
/// and NaN is the integer poison).
void store_value(HostTensor& t, std::size_t i, double v);
/// Element `i` as a double (exact for every dtype).
double load_value(const HostTensor& t, std::size_t i);
/// store_value and load_value through float.
void store_element(HostTensor& t, std::size_t i, float v);
float load_element(const HostTensor& t, std::size_t i);

/// `elements` values uniform in (-1, 1), never zero, rounded to `dtype`.
HostTensor random_tensor(std::string name, Dtype dtype, std::size_t elements, SplitMix64 rng);
/// `elements` copies of `v` (NaN poisons an output or an argument that must not be read).
HostTensor filled_tensor(std::string name, Dtype dtype, std::size_t elements, float v);
/// `elements` 4-byte zeros: a scratch workspace (float partials or int counters).
HostTensor zero_workspace(std::string name, std::size_t elements);

OperatorArg scalar_i32(std::string name, std::int64_t v);
OperatorArg scalar_f32(std::string name, float v);
OperatorArg tensor_arg(std::string name, std::size_t index);

/// Argument contracts (Operator::arguments): a tensor of `elements`, an
/// int32 that must equal `value`, a free float scalar.
ArgumentSpec tensor_spec(std::string name, Dtype dtype, std::uint64_t elements, bool is_output = false);
ArgumentSpec int_spec(std::string name, std::int64_t value);
ArgumentSpec float_spec(std::string name);

/// The float scalar argument called `name`, NaN when there is none.
float scalar_named(const Workload& w, std::string_view name);
/// The index of the tensor called `name`, or w.tensors.size() when there is none.
std::size_t tensor_named(const Workload& w, std::string_view name);

}  // namespace kforge
