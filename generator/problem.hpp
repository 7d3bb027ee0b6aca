// A problem: one operator applied to concrete dimensions, dtype and layout,
// plus the choices that change what is computed (a fused epilogue, and
// operator-specific attributes such as reduce's kind=sum|max).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/dtype.hpp"
#include "core/result.hpp"

namespace kforge {

/// Elementwise activation of a fused epilogue. The integer values are the
/// generator's `KF_ACTIVATION`, the manifest name `activation` and the prelude's
/// `KF_ACTIVATION_<NAME>` (templates/prelude/epilogue.h).
enum class Activation { kNone = 0, kRelu = 1, kGelu = 2, kSilu = 3 };

std::string_view activation_name(Activation a);  ///< "none", "relu", "gelu", "silu"
std::optional<Activation> parse_activation(std::string_view s);

/// A fused epilogue: out = activation(pre + (bias ? bias[j] : 0)), where pre
/// is what the operator computes without one. The operator says whether it
/// supports one (gemm does; see generator/gemm_operator.hpp).
struct Epilogue {
  Activation activation = Activation::kNone;
  bool bias = false;

  bool plain() const { return activation == Activation::kNone && !bias; }
  /// "none", "bias", "relu", "bias+gelu": what `parse_epilogue` reads back.
  std::string name() const;
  bool operator==(const Epilogue&) const = default;
};

/// Reads "none", "bias", an activation, or "bias+ACT" (the parts in either
/// order, each at most once). Errors name the text and the known parts.
Result<Epilogue> parse_epilogue(std::string_view text);

struct Problem {
  std::string op;                             ///< operator name, e.g. "gemm"
  std::map<std::string, std::int64_t> dims;   ///< e.g. M, N, K, batch
  Dtype dtype = Dtype::kF32;
  Layout layout;
  Epilogue epilogue;                          ///< plain unless the operator supports one
  /// Operator-specific choices that are part of the problem like dtype (e.g.
  /// reduce kind=max). Each operator declares its attributes, values and
  /// defaults (Operator::attributes); normalize fills the defaults.
  std::map<std::string, std::string> attrs;

  /// "M=256,N=256,K=256,batch=1" (dims in sorted order).
  std::string dims_string() const;
  /// "axis=last,kind=max" (sorted); empty when there are none.
  std::string attrs_string() const;
  /// Unique key, the DB's problem key:
  /// "gemm/K=256,M=256,N=256,batch=1/f32/NN", then "/<epilogue name>" when the
  /// epilogue is not plain, then "/<attrs_string>" when there are attributes:
  /// "gemm/K=64,M=64,N=64,batch=1/f16/NT/bias+relu", "reduce/cols=4096,rows=8/f32/NN/axis=last,kind=max".
  /// Keys of plain problems without attributes are those of earlier versions.
  std::string key() const;
  std::int64_t dim(const std::string& name) const;  ///< 0 when absent
  /// The attribute's value, or "" when absent.
  std::string attr(const std::string& name) const;
  bool operator==(const Problem&) const = default;
};

/// A problem key without its dims ("gemm/f32/NN[/...]"): problems of one
/// family differ only in their dims, so one's winner is a fair guess for
/// another (the runtime's "nearest" rule, the tuner's warm start).
std::string problem_family(std::string_view key);

/// Sum over dims of |log2(a) - log2(b)|: how far apart two problems of one
/// family are. Infinity when the dim names differ or a dim is not positive.
double dims_log2_distance(const std::map<std::string, std::int64_t>& a,
                          const std::map<std::string, std::int64_t>& b);

/// Parses "M=256,N=256,K=256" into dims; every value a positive integer.
Result<std::map<std::string, std::int64_t>> parse_dims(std::string_view text);

/// Parses "kind=max,axis=all" into attributes: names and values of
/// lower-case letters, digits and '_', each name once. Empty text gives none.
Result<std::map<std::string, std::string>> parse_attrs(std::string_view text);

}  // namespace kforge
