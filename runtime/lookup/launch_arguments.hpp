// The check every Lookup launch passes: the caller's arguments against the
// operator's contract for the selected problem (Operator::arguments).
#pragma once

#include <string_view>
#include <vector>

#include "generator/operator.hpp"
#include "runtime/device/backend.hpp"

namespace kforge {

/// kBadInput naming the first argument (index and name, expected against
/// given) whose count, kind, size or dim disagrees with `contract`: a
/// buffer smaller than its tensor, an int32 dim other than the problem's
/// (the sizes assume it), a scalar where a buffer belongs. A buffer the
/// kernel does not access for this problem may be any size.
Status check_launch_arguments(std::string_view op, const std::vector<ArgumentSpec>& contract,
                              const std::vector<KernelArg>& args);

}  // namespace kforge
