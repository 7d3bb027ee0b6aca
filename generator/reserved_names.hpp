// Names that kforge itself gives meaning to, which a manifest's parameter,
// an operator declaration's dimension or an attribute must not take: the
// expression language's built-ins and the KF_/kf_ namespace of the prelude.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kforge {

/// Why `name` may not be a parameter, dimension or attribute name (it is a
/// device limit, `dtype_bytes` or a function of the expression language, or
/// it starts with the prelude's KF_/kf_), or "" when it is free.
std::string reserved_name_reason(std::string_view name);

/// Every macro the generator or a backend's prelude defines (KF_...).
const std::vector<std::string_view>& prelude_macros();

/// Why attribute `name` with `values` would redefine a prelude macro
/// (KF_<NAME> or KF_<NAME>_<VALUE>), or "" when none of them is taken.
std::string attribute_macro_clash(std::string_view name, const std::vector<std::string>& values);

}  // namespace kforge
