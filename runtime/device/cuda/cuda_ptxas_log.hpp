// Reading NVIDIA compiler output as text: ptxas' verbose log (resources per
// entry function) and the PTX (launch bounds, initialized globals).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/device/backend.hpp"

namespace kforge {

/// What `ptxas -v` reports for one entry function; -1 where absent.
struct PtxasReport {
  std::int64_t registers = -1;
  std::int64_t shared_bytes = -1;      ///< static shared memory ("bytes smem"); 0 when the line omits it
  std::int64_t stack_bytes = -1;       ///< "bytes stack frame"
  std::int64_t spill_store_bytes = -1;
  std::int64_t spill_load_bytes = -1;
};

/// Parses the lines after "Compiling entry function '<kernel>'" up to the next
/// entry function:
///   ptxas         .     256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
///   ptxas info    : Used 40 registers, used 1 barriers, 256 bytes cumulative stack size, 1024 bytes smem
PtxasReport parse_ptxas_log(const std::string& log, const std::string& kernel);

/// ptxas' coded remarks anywhere in the log, in order, once each:
///   ptxas info    : (C7508) Potential Performance Loss: 'setmaxnreg' ignored; ...
///   ptxas warning : (C7510) Potential Performance Loss: wgmma.mma_async instructions are serialized ...
/// A remark saying wgmma.mma_async instructions are serialized (C7510,
/// C7511, C7514, ... by cause) is marked serializes_tensor_ops.
std::vector<CompilerDiagnostic> parse_ptxas_diagnostics(const std::string& log);

/// Threads per block the PTX entry declares (.maxntid or .reqntid x*y*z), -1 when none.
std::int64_t ptx_max_threads(const std::string& ptx, const std::string& kernel);

/// The initializer of a scalar global in the PTX ("... .u32 NAME = 65536;").
std::optional<std::int64_t> ptx_global_value(const std::string& ptx, const std::string& name);

}  // namespace kforge
