// Whether library candidates (library templates) take part for an
// operator: compared with the kernels (the default), forbidden, or forced.
// Set per operator by the lookup's API, KFORGE_LIBRARY_<OP> or a CLI flag.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "generator/manifest.hpp"

namespace kforge {

enum class LibraryPolicy {
  kCompare,  ///< libraries and kernels both; the faster wins
  kForbid,   ///< kernels only
  kForce,    ///< libraries only
};

std::string_view library_policy_name(LibraryPolicy p);  ///< "compare", "forbid", "force"
std::optional<LibraryPolicy> parse_library_policy(std::string_view text);
/// "KFORGE_LIBRARY_GEMM" for "gemm".
std::string library_policy_variable(std::string_view op);
/// The policy $KFORGE_LIBRARY_<OP> sets; kCompare when unset. A value that is
/// none of the three is kBadInput naming the variable and the value.
Result<LibraryPolicy> library_policy_from_env(std::string_view op);
/// Whether `m` may be tuned or selected under `p`.
bool policy_admits(LibraryPolicy p, const TemplateManifest& m);

}  // namespace kforge
