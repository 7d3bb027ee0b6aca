// The operator's argument list against a loaded kernel's parameters, where
// the backend reports their types (OpenCL): a declared operator whose
// operator.json says f32 for the kernel's `int n` would pass every value
// as the wrong bits, and a planted bug could then pass validation.
#pragma once

#include <vector>

#include "core/result.hpp"
#include "generator/operator.hpp"
#include "runtime/device/backend.hpp"

namespace kforge {

/// kBadInput naming the argument, its declared kind and the parameter's
/// type where they certainly disagree: a count that differs, a tensor for a
/// parameter that is not a pointer or the reverse, an i32 for a floating
/// parameter or an f32 for an integer one. A type the check does not know
/// (a typedef) is no verdict; ok where the kernel reports no types.
Status check_signature(const Kernel& kernel, const std::vector<ArgumentSpec>& args);

}  // namespace kforge
