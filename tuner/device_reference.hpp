// A declared operator's reference template, run on the tuning device: a
// trusted simple kernel of the same operator in one fixed configuration,
// whose outputs are the reference (operator.json's reference.template).
#pragma once

#include <vector>

#include "backend.hpp"
#include "declared_operator.hpp"

namespace kforge {

/// The references of `ws`, each from two launches of the reference
/// template on fresh copies of its inputs that must agree bit for bit.
/// Errors name the operator.json field, or the reference and the element.
Result<std::vector<Reference>> device_references(Device& device, const DeclaredOperator& op, const Problem& p,
                                                 const std::vector<const Workload*>& ws);

}  // namespace kforge
