// A declared operator's reference template, run on the tuning device: a
// trusted simple kernel of the same operator in one fixed configuration,
// whose outputs are the reference (operator.json's reference.template).
#pragma once

#include <vector>

#include "generator/declared_operator.hpp"
#include "runtime/device/backend.hpp"

namespace kforge {

/// The type a reference template computes and stores its outputs in,
/// kf_ref_t: double where the device has it, else float.
Dtype reference_dtype(const DeviceInfo& info);
/// The source a reference template is instantiated with before the
/// backend's prelude: kf_ref_t and KF_REF_F64 (1 or 0).
std::string reference_prelude(const DeviceInfo& info);
/// What validates `op` on `info`, with the precision a reference template
/// computes in there ("..., computed in f64 on the device").
std::string describe_reference(const DeclaredOperator& op, const DeviceInfo& info);

/// The references of `ws`, each from two launches of the reference
/// template on fresh copies of its inputs that must agree bit for bit.
/// Errors name the operator.json field, or the reference and the element.
Result<std::vector<Reference>> device_references(Device& device, const DeclaredOperator& op, const Problem& p,
                                                 const std::vector<const Workload*>& ws);

}  // namespace kforge
