// An AMDGPU target id (a code object's amdhsa.target, a compiler's target
// string) read into its processor and features. Two spellings occur: the
// code object v4/v5 one, "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", and
// the newer one with a generic version and an OS field,
// "amdgpu9.0a-amd-amdhsa-unknown-gfx90a" (LLVM 20 on, as Triton writes).
#pragma once

#include <string>
#include <string_view>

namespace kforge {

struct AmdTargetId {
  std::string processor;  ///< "gfx90a"; empty when the id names none
  std::string features;   ///< LLVM's form: "+sramecc,-xnack"
};

AmdTargetId parse_amd_target_id(std::string_view id);

}  // namespace kforge
