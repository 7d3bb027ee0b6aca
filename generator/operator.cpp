// The registry of built-in operators.
#include "operator.hpp"

#include "gemm_operator.hpp"

namespace kforge {

namespace {
const GemmOperator kGemm{};
}  // namespace

const Operator* find_operator(std::string_view name) {
  for (const Operator* op : all_operators()) {
    if (op->name() == name) return op;
  }
  return nullptr;
}

std::vector<const Operator*> all_operators() {
  return {&kGemm};
}

}  // namespace kforge
