// An instance: one template, configuration and problem type turned into
// compilable source (defines + prelude + kernel source) and launch geometry.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.hpp"
#include "generator/config.hpp"
#include "generator/device_limits.hpp"
#include "generator/operator.hpp"
#include "generator/problem.hpp"
#include "generator/template_source.hpp"

namespace kforge {

struct LaunchGeometry {
  std::array<std::int64_t, 3> block{1, 1, 1};  ///< threads per block
  std::array<std::int64_t, 3> grid{1, 1, 1};   ///< blocks per grid
};

/// `kernel` + "__" + `config`; where that passes kMaxKernelName characters,
/// the configuration is cut and its hash appended instead: the compiler names
/// files after the kernel (PoCL), and a file name has at most 255 bytes.
constexpr std::size_t kMaxKernelName = 160;
std::string kernel_name_for(const std::string& kernel, const std::string& config);

struct Instance {
  std::string template_name;
  std::string config_name;  ///< canonical configuration name
  std::string kernel_name;  ///< kernel_name_for(manifest kernel, config_name)
  std::string source;       ///< full translation unit handed to the compiler
  LaunchGeometry geometry;
  std::int64_t local_memory_bytes = 0;
};

/// Generates the instance. The configuration is checked against the declared
/// values first (a database is input, not code), then the constraints. The
/// source is, in order: `#define` lines for every parameter, KF_KERNEL_NAME,
/// KF_DTYPE_<DTYPE>, KF_DTYPE_BYTES, KF_TRANS_A/KF_TRANS_B, KF_BIAS (0|1) and
/// KF_ACTIVATION (0 none, 1 relu, 2 gelu, 3 silu) from the problem's epilogue,
/// then per operator attribute KF_<NAME> (the value's index) and
/// KF_<NAME>_<VALUE> 1; the prelude; the kernel source.
Result<Instance> instantiate(const TemplateSource& tpl, std::string_view prelude,
                             const Operator& op, const Config& config, const Problem& problem,
                             const DeviceLimits& limits);

}  // namespace kforge
