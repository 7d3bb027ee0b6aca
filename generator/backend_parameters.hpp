// The parameters a tune varies on one backend. A Triton template declares
// some parameters for some targets only (AMD's waves_per_eu): elsewhere
// they would multiply the space with configurations that compile the same
// kernel. The Triton interpreter ignores every compile option (num_warps,
// num_stages, ...): there only the kernel's constexprs change what runs.
#pragma once

#include <string_view>

#include "generator/manifest.hpp"

namespace kforge {

/// `m` with every parameter that does not apply on `backend` held at its
/// default (its values cut to the default); `m` as it is for other kinds.
/// Configuration names keep every parameter, so stored results still match.
TemplateManifest manifest_for_backend(const TemplateManifest& m, std::string_view backend);

}  // namespace kforge
