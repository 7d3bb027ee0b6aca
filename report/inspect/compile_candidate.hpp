// One template instance compiled for a compile-only target (no GPU): its
// resources, the occupancy they allow and whether the tuner would prune it.
// What `kforge compile` prints per candidate and `kforge capabilities`
// reports for the targets it compile-checks (docs/compile-only.md).
#pragma once

#include <optional>
#include <string>

#include "generator/operator.hpp"
#include "generator/search_space.hpp"
#include "generator/template_source.hpp"
#include "runtime/binaries/code_object_reader.hpp"
#include "runtime/device/occupancy.hpp"
#include "runtime/device/target.hpp"

namespace kforge::report {

struct CompiledCandidate {
  std::string template_name, config;
  std::string status = "ok";  ///< ok, resource_limit, not_supported, compile_error
  std::string reason;
  ResourceReport res;
  std::int64_t threads = 0;  ///< from the manifest's launch.block
  OccupancyDetail occ;
  std::optional<std::string> prune;
  double compile_ms = 0;
  AmdKernelMetadata amd;  ///< HIP: the kernel's code-object metadata
};

/// Whether a HIP target is compiled offline with clang: `compiler` "clang",
/// or "auto" where hipRTC cannot reach the architecture (gfx942, gfx950 with HIP 5.2).
bool uses_offline_hip(const Target& target, const std::string& compiler);

/// The compiler named beside the figures, so that different compilers' never
/// mix: "nvrtc 13.0", "hipRTC (HIP 5.2.21153)", "clang 22.1.8 (offline)", or
/// "clang (offline, unavailable: <why>)". NVRTC or hipRTC missing: kNotFound.
Result<std::string> compiler_name(const Target& target, bool offline);

/// Instantiates and compiles `cfg` of `tpl` for `target`; with `out_dir`
/// writes the source, binary and log there. A candidate that fails is a
/// status; errors are a missing NVRTC or hipRTC (kNotFound) and unwritable files.
Result<CompiledCandidate> compile_candidate(const Target& target, bool offline, const TemplateSource& tpl,
                                            const Operator& op, const Config& cfg, const Problem& problem,
                                            const std::string& out_dir);

}  // namespace kforge::report
