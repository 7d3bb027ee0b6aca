// Compile-only for Triton templates (docs/triton.md): the Triton helpers
// enumerate a template directory's configurations for one target and
// compile each (python3 -m kforge_triton.sweep, a process of its own, since
// libtriton carries its own LLVM); kforge then reads every binary with its
// own readers: ptxas' log and the SASS for a cubin, the code object's
// metadata and its disassembly for an HSACO. What `kforge compile --triton`
// prints.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "generator/problem.hpp"
#include "report/inspect/compile_candidate.hpp"
#include "runtime/binaries/instruction_mix.hpp"
#include "runtime/device/target.hpp"
#include "runtime/kinds/triton_helpers.hpp"

namespace kforge::report {

struct TritonSweepOptions {
  std::string config_json;  ///< one configuration, {"BLOCK_M": 128, ...}; empty: the valid space
  int max_configs = 0;      ///< spread evenly over the valid space; 0: all
  std::string out_dir;      ///< binaries, assembly and the sweep's JSON; empty: a temporary directory
  double timeout_s = 300;   ///< per compile (one spilling configuration took 61 s)
};

struct TritonCandidate {
  CompiledCandidate compiled;  ///< resources, occupancy, pruning, as a source template's
  std::string binary_path;
  std::string format;  ///< "cubin" or "hsaco"
  /// Triton's metadata: name, shared (dynamic shared memory to pass at launch), num_warps, ...
  nlohmann::json metadata;
  /// The launch ABI kforge's devices would launch it with (runtime/kinds/triton_binary.hpp), its
  /// parameter table checked against the binary's; null where it cannot be launched (status says why).
  nlohmann::json launch_abi;
  InstructionMix mix;             ///< of the SASS or AMDGCN; no categories when it could not be read
  std::string disassembly_error;  ///< why there is no mix; empty otherwise
};

/// Compiles the Triton template in `dir` for `target` and `problem`.
/// Errors: the helpers cannot run (no Python, no Triton: kNotFound naming
/// what to install), a bad manifest or a target it does not list (kBadInput,
/// the helper's message). A candidate that fails to compile is a status.
Result<std::vector<TritonCandidate>> compile_triton_template(const std::string& dir, const Target& target,
                                                             const Problem& problem, const TritonSweepOptions& options);

}  // namespace kforge::report
