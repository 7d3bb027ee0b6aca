// Operator contracts: problem dimensions, arguments, cost model, host reference.
//
// An operator is C++ code; templates implement it. The kernel argument list of
// every template of an operator is the operator's (see each operator's header).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/dtype.hpp"
#include "core/result.hpp"
#include "generator/expr.hpp"
#include "generator/problem.hpp"

namespace kforge {

/// A host tensor, stored as its dtype's bytes (f32 outputs are always kF32).
struct HostTensor {
  std::string name;
  Dtype dtype = Dtype::kF32;
  std::vector<std::uint8_t> bytes;
  bool is_output = false;
  std::size_t elements() const { return bytes.size() / dtype_bytes(dtype); }
  float* f32() { return reinterpret_cast<float*>(bytes.data()); }
  const float* f32() const { return reinterpret_cast<const float*>(bytes.data()); }
};

/// One kernel argument in the operator's order: a tensor (by index) or a scalar.
struct OperatorArg {
  enum class Kind { kTensor, kInt32, kFloat32 };
  Kind kind = Kind::kInt32;
  std::string name;
  std::size_t tensor = 0;  ///< index into Workload::tensors when kind == kTensor
  std::int32_t i32 = 0;
  float f32 = 0.0f;
};

/// One kernel argument of an operator's contract for a problem, sized from
/// the problem alone (nothing allocated): what a launch must pass, and what
/// a tuning run will allocate (Operator::arguments).
struct ArgumentSpec {
  OperatorArg::Kind kind = OperatorArg::Kind::kInt32;
  std::string name;
  Dtype dtype = Dtype::kF32;   ///< a tensor's element type (4-byte scratch is kF32)
  std::uint64_t elements = 0;  ///< a tensor's element count (saturates, never wraps)
  /// A tensor's dims in C order where the contract states them (gemm's A is
  /// {batch, M, K}, or {batch, K, M} transposed); empty where only the count is.
  std::vector<std::uint64_t> shape;
  bool is_output = false;
  /// false: the kernel neither reads nor writes it for this problem (gemm's
  /// bias without a bias epilogue), so any buffer will do.
  bool accessed = true;
  /// An int32 argument that must equal a problem dim (gemm's M), which the
  /// tensor sizes assume; nullopt for free scalars (alpha, eps).
  std::optional<std::int64_t> value;
  /// The tensor's size in bytes, saturating at the largest std::uint64_t.
  std::uint64_t bytes() const;
};

/// a * b * ..., saturating at the largest std::uint64_t: element counts of
/// problems too large to address stay comparable with a memory size.
std::uint64_t saturating_product(std::initializer_list<std::uint64_t> factors);

/// Concrete, reproducible inputs for one problem.
struct Workload {
  std::vector<HostTensor> tensors;
  std::vector<OperatorArg> args;  ///< in kernel-parameter order
  std::size_t output = 0;         ///< index of the tensor the kernel writes
  /// Every tensor the kernel writes, in argument order, when there are
  /// several (a declared operator's); empty means {output}. The reference
  /// covers them concatenated in this order.
  std::vector<std::size_t> outputs;
  std::uint64_t seed = 0;
};

/// The tensors a workload's kernel writes: `outputs`, or {output}.
std::vector<std::size_t> output_tensors(const Workload& w);

/// How a validation workload exercises the kernel.
enum class WorkloadKind {
  /// Output poisoned with NaN and not read by the contract (e.g. gemm beta = 0):
  /// every element must be written, and none may read the poison.
  kPoisonedOutput,
  /// Output is also an input (e.g. gemm beta != 0), filled with random values.
  kAccumulate,
};

/// The double-precision answer and, per element, the magnitude an error is
/// measured against: |out - value| <= tolerance * scale passes (see
/// docs/tolerances.md).
struct Reference {
  std::vector<double> value;
  std::vector<double> scale;
  double tolerance = 0.0;  ///< dimensionless factor from the tolerance table
};

/// An operator-specific choice that is part of the problem like dtype
/// (Problem::attrs), e.g. reduce's kind = sum | max. The generator defines
/// `KF_<NAME>` as the value's index and `KF_<NAME>_<VALUE>` as 1 (upper
/// case); manifest expressions read `<name>` as the index.
struct AttributeSpec {
  std::string name;
  std::vector<std::string> values;  ///< the first is the default
  std::string doc;
};

class Operator {
 public:
  virtual ~Operator() = default;
  virtual std::string_view name() const = 0;
  /// Problem dimensions the operator reads; all must be given except those with defaults.
  virtual std::vector<std::string> dims() const = 0;
  /// The problem a tune without --shape runs: small enough for a CPU device
  /// to tune in seconds, large enough that the tunables matter.
  virtual std::map<std::string, std::int64_t> default_dims() const = 0;
  /// Fills defaults (e.g. batch = 1) and checks the problem is well formed.
  virtual Result<Problem> normalize(Problem p) const = 0;
  /// Extra names (beyond dims) that manifest expressions may read, e.g. trans_a.
  virtual std::vector<std::string> extra_names() const = 0;
  /// Adds dims and extra names to an expression environment.
  virtual void add_to(Env& env, const Problem& p) const = 0;
  virtual double flops(const Problem& p) const = 0;
  /// Fewest bytes the operator must move (each input read once, output written once).
  virtual double bytes(const Problem& p) const = 0;
  /// Random inputs (never zeros) drawn from `seed`.
  virtual Workload make_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind) const = 0;
  /// The kernel arguments of a (normalized) problem, in kernel-parameter
  /// order, without allocating them: the same names, kinds, dtypes and
  /// sizes as make_workload's.
  virtual std::vector<ArgumentSpec> arguments(const Problem& p) const = 0;
  /// The seed of a tuning run's `kind` workload, from the run's seed: by
  /// default one apart, so each validation run draws its own inputs.
  virtual std::uint64_t workload_seed(std::uint64_t run_seed, WorkloadKind kind) const {
    return run_seed + static_cast<std::uint64_t>(kind);
  }
  virtual Reference reference(const Problem& p, const Workload& w) const = 0;
  /// The references of several workloads of one problem, in order. An
  /// operator whose workloads share inputs may compute what they share once.
  virtual std::vector<Reference> references(const Problem& p, const std::vector<const Workload*>& ws) const {
    std::vector<Reference> out;
    for (const Workload* w : ws) out.push_back(reference(p, *w));
    return out;
  }
  /// references(), or an error when the reference itself fails (a user's
  /// reference that crashes, returns an error or disagrees with itself).
  virtual Result<std::vector<Reference>> try_references(const Problem& p,
                                                        const std::vector<const Workload*>& ws) const {
    return references(p, ws);
  }
  /// Operator-specific attributes; none by default.
  virtual std::vector<AttributeSpec> attributes() const { return {}; }
  /// The validation run of `kind`, as a failure's reason names it: by what
  /// the run does for this operator (gemm's kAccumulate reads C).
  virtual std::string run_name(WorkloadKind kind) const {
    return kind == WorkloadKind::kPoisonedOutput ? "second validation run, the first timed launch"
                                                 : "first validation run, untimed";
  }
  /// Whether problems may carry a fused epilogue (Problem::epilogue); the
  /// operator's header says where it applies.
  virtual bool supports_epilogue() const { return false; }
  /// Whether data files (.npy inputs or expected outputs) fix the sizes of
  /// the problems it takes: only the problem the data are sized for is
  /// valid, which need not be the default one.
  virtual bool fixed_data() const { return false; }
};

/// For normalize(): fills default attribute values, and rejects unknown
/// attributes or values, and an epilogue the operator does not support.
Status normalize_attributes(const Operator& op, Problem& p);
/// Attribute names, for extra_names().
std::vector<std::string> attribute_names(const Operator& op);
/// Adds each attribute as the index of its value, for add_to().
void add_attributes_to(Env& env, const Operator& op, const Problem& p);

/// Operators by name ("gemm"), built-in or registered; nullptr when unknown.
const Operator* find_operator(std::string_view name);
/// The built-in operators, then those registered, in registration order.
std::vector<const Operator*> all_operators();
std::vector<const Operator*> builtin_operators();

/// Makes a declared operator known to this process (find_operator). The same
/// name registered again with the same `identity` (its declaration's
/// canonical text) is the one already held; with another identity it is an
/// error naming both `origin`s. Registered operators live as long as the process.
Status register_operator(std::shared_ptr<const Operator> op, const std::string& identity,
                         const std::string& origin);

}  // namespace kforge
