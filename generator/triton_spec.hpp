// What a Triton template's manifest (kind "triton", docs/triton.md) says
// beyond a source template's: the kernel's arguments and how each comes from
// the operator's, the fixed constexprs and compile options, the
// specialization hints, the targets by name. TemplateManifest::parse reads
// such a manifest as a source template's (its targets become backends, its
// grid the launch grid, num_warps x warp size the block) and keeps this
// part beside it; instantiate() turns it into the compile request.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "generator/expr.hpp"

namespace kforge {

/// The backend of the Triton interpreter device (runtime/device/host/triton_interpreter.hpp):
/// its DeviceInfo::backend and selector prefix. Every Triton template runs
/// there whatever its targets.
inline constexpr std::string_view kInterpreterBackend = "interpret";

/// One non-constexpr kernel argument: the operator's argument `bind`, the
/// int32 `value` computes from the problem, or a `workspace`: memory the
/// device makes for the kernel (the caller passes nothing), of as many
/// elements as the expression gives over the problem and the configuration,
/// zero-filled where `zeroed` (and left zero by the kernel).
struct TritonArgument {
  std::string name;
  std::string type;  ///< Triton's, "{dtype}" standing for the problem's element type
  std::string bind;  ///< the operator argument passed; empty when `value` or `workspace` is given
  std::optional<Expr> value;
  std::optional<Expr> workspace;
  bool zeroed = false;
};

/// A divisibility promise to the compiler, made where `when` holds (always when absent).
struct TritonHint {
  std::string argument;
  std::optional<Expr> when;
};

struct TritonSpec {
  std::vector<std::string> targets;  ///< "cuda:sm_90a", "hip:gfx942", ...
  std::vector<TritonArgument> arguments;
  std::map<std::string, nlohmann::json> constexprs;  ///< name -> integer, or an expression's text
  nlohmann::json options = nlohmann::json::object();  ///< fixed compile options
  std::vector<TritonHint> specialization;
  /// Parameters that apply to some backends only (AMD's waves_per_eu ...): name -> backends.
  std::map<std::string, std::vector<std::string>> parameter_backends;
};

/// The compile options a Triton parameter or `options` entry may name.
bool is_triton_option(const std::string& name);

/// Splits a Triton manifest into the source-template manifest kforge's
/// parser reads (returned) and the TritonSpec; kBadInput naming `path` and
/// the field for a malformed Triton field.
Result<nlohmann::json> split_triton_manifest(const nlohmann::json& root, const std::string& path, TritonSpec& spec);

}  // namespace kforge
