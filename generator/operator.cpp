// The registry of built-in operators, and the attribute helpers every operator shares.
#include "generator/operator.hpp"

#include <algorithm>
#include <limits>
#include <mutex>

#include "generator/attention_operator.hpp"
#include "generator/gemm_operator.hpp"
#include "generator/layernorm_operator.hpp"
#include "generator/reduce_operator.hpp"
#include "generator/rmsnorm_operator.hpp"
#include "generator/rope_operator.hpp"
#include "generator/softmax_operator.hpp"
#include "generator/swiglu_operator.hpp"
#include "generator/transpose_operator.hpp"

namespace kforge {

namespace {
const GemmOperator kGemm{};
const LayernormOperator kLayernorm{};
const RmsnormOperator kRmsnorm{};
const AttentionOperator kAttention{};
const ReduceOperator kReduce{};
const TransposeOperator kTranspose{};
const SoftmaxOperator kSoftmax{};
const RopeOperator kRope{};
const SwigluOperator kSwiglu{};

struct Registered {
  std::shared_ptr<const Operator> op;
  std::string identity, origin;
};

/// Registered operators. Each is held by a shared pointer, so a pointer
/// handed out stays valid when the vector grows.
std::vector<Registered>& registry() {
  static std::vector<Registered> r;
  return r;
}
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}
}  // namespace

std::uint64_t saturating_product(std::initializer_list<std::uint64_t> factors) {
  std::uint64_t product = 1;
  for (std::uint64_t f : factors) {
    if (__builtin_mul_overflow(product, f, &product)) return std::numeric_limits<std::uint64_t>::max();
  }
  return product;
}

std::uint64_t ArgumentSpec::bytes() const {
  return kind == OperatorArg::Kind::kTensor ? saturating_product({elements, dtype_bytes(dtype)}) : 0;
}

const Operator* find_operator(std::string_view name) {
  for (const Operator* op : all_operators()) {
    if (op->name() == name) return op;
  }
  return nullptr;
}

std::vector<const Operator*> builtin_operators() {
  return {&kGemm, &kReduce, &kSoftmax, &kTranspose, &kLayernorm, &kRmsnorm, &kAttention, &kRope, &kSwiglu};
}

std::vector<const Operator*> all_operators() {
  std::vector<const Operator*> out = builtin_operators();
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (const auto& r : registry()) out.push_back(r.op.get());
  return out;
}

Status register_operator(std::shared_ptr<const Operator> op, const std::string& identity,
                         const std::string& origin) {
  for (const Operator* b : builtin_operators()) {
    if (b->name() == op->name())
      return Error::bad_input(origin + ": name: '" + std::string(b->name()) + "' is a built-in operator");
  }
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (const auto& r : registry()) {
    if (r.op->name() != op->name()) continue;
    if (r.identity == identity) return ok_status();
    return Error::bad_input(origin + ": name: operator '" + std::string(op->name()) +
                            "' is already declared differently by " + r.origin);
  }
  registry().push_back({std::move(op), identity, origin});
  return ok_status();
}

std::vector<std::size_t> output_tensors(const Workload& w) {
  return w.outputs.empty() ? std::vector<std::size_t>{w.output} : w.outputs;
}

Status normalize_attributes(const Operator& op, Problem& p) {
  const std::string who(op.name());
  if (!p.epilogue.plain() && !op.supports_epilogue()) {
    return Error::bad_input(who + ": epilogue '" + p.epilogue.name() + "' is not supported (" + who +
                            " has no fused epilogue)");
  }
  const auto specs = op.attributes();
  for (const auto& [name, value] : p.attrs) {
    auto spec =
        std::find_if(specs.begin(), specs.end(), [&](const AttributeSpec& s) { return s.name == name; });
    if (spec == specs.end()) {
      std::vector<std::string> names;
      for (const auto& s : specs) names.push_back(s.name);
      return Error::bad_input(who + ": unknown attribute '" + name + "' (" +
                              (names.empty() ? who + " has none" : who + " reads " + join(names)) + ")");
    }
    if (std::find(spec->values.begin(), spec->values.end(), value) == spec->values.end()) {
      return Error::bad_input(who + ": attribute " + name + " = '" + value + "' is not one of " +
                              join(spec->values));
    }
  }
  for (const auto& s : specs) p.attrs.emplace(s.name, s.values.front());
  return ok_status();
}

std::vector<std::string> attribute_names(const Operator& op) {
  std::vector<std::string> names;
  for (const auto& s : op.attributes()) names.push_back(s.name);
  return names;
}

void add_attributes_to(Env& env, const Operator& op, const Problem& p) {
  for (const auto& s : op.attributes()) {
    auto it = p.attrs.find(s.name);
    std::int64_t index = 0;
    if (it != p.attrs.end()) {
      auto v = std::find(s.values.begin(), s.values.end(), it->second);
      index = v == s.values.end() ? 0 : static_cast<std::int64_t>(v - s.values.begin());
    }
    env[s.name] = index;
  }
}

}  // namespace kforge
