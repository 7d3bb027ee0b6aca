// `kforge capabilities`' compile check: on a HIP target only the offline
// compiler reaches (gfx942, gfx950 with hipRTC 5.2), named with --target,
// each template's default configuration is compiled and its resources,
// occupancy, spills and pruning verdict reported with the compiler's name.
#pragma once

#include <nlohmann/json.hpp>

#include "generator/template_source.hpp"
#include "report/capabilities.hpp"

namespace kforge::report {

/// Whether `target` gets a compile check: a hip target from --target whose
/// architecture has a resource table and that hipRTC cannot reach.
bool compile_checked(const CapabilityTarget& target);

/// `t`'s default configuration, on the operator's default problem in its
/// first dtype and layout, compiled offline for `target`: compiler, problem,
/// config, status and reason, vgprs, agprs, sgprs, lds_bytes,
/// scratch_bytes, spills, wavefront_size, threads_per_block, occupancy and
/// occupancy_limiter (-1 / "" when unknown). A library template is
/// "not_compiled".
nlohmann::ordered_json compile_check_json(const TemplateSource& t, const CapabilityTarget& target);

}  // namespace kforge::report
