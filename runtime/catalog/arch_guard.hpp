// Architecture guards: a target-specific template (tensor cores) declares the
// architectures it needs in its manifest's arch_guard; the tuner and the
// runtime skip it where the guard fails and use a portable template instead.
#pragma once

#include <string>

#include "core/result.hpp"
#include "generator/manifest.hpp"

namespace kforge {

/// Ok when `m.arch_guard` is empty (portable) or one of its entries matches
/// `arch` on `backend`. Entry syntax (docs/templates.md, arch_guard):
///   "sm_80+"   NVIDIA sm_80 or newer (compute capability >= 8.0; "sm_90a" counts as 9.0)
///   "sm_90a"   exactly that architecture ("sm_90" does not match "sm_90a": the
///              a-suffix features are absent on plain sm_90 code)
///   "gfx90a"   exactly that AMD architecture (target features after ':' ignored)
///   "gfx9+"    any AMD gfx9xx (same generation, that family or newer within it)
/// An sm_ entry never matches a hip device, nor a gfx entry a cuda one.
/// Failure: kUnsupported, e.g. "gemm_mma_sync requires sm_80+ (device is sm_75)".
Status check_arch_guard(const TemplateManifest& m, const std::string& backend, const std::string& arch);

/// Checks the syntax of one guard entry; the error names the entry.
Status check_arch_guard_entry(const std::string& entry);

}  // namespace kforge
