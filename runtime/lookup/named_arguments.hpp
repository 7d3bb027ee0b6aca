// Launch arguments given by name (a declared operator's argument names, or a
// built-in's: docs/operators.md), put in the contract's order.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "generator/operator.hpp"
#include "runtime/device/backend.hpp"

namespace kforge {

struct NamedArg {
  std::string name;
  KernelArg arg;
};

/// `named` in `contract`'s order; kBadInput naming `op` and the argument for
/// a name the contract lacks, one given twice, or one left out.
Result<std::vector<KernelArg>> order_named_arguments(std::string_view op,
                                                     const std::vector<ArgumentSpec>& contract,
                                                     const std::vector<NamedArg>& named);

}  // namespace kforge
