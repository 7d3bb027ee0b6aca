// How a tuning run compiles ahead of its measurements, decided once from
// the request, the device's type and its compiler's capabilities: how many
// threads compile, how big a batch is, whether compiles overlap the timed
// runs, whether a batch's candidates share a program, how many processes
// generate machine code ahead, and whether a batch is validated first and
// timed fastest first (docs/measurement.md, "Compile pipeline"). The
// session, the worker and the runner follow the plan; none decides again.
#pragma once

#include <cstddef>

#include "runtime/device/backend.hpp"
#include "runtime/device/device_info.hpp"

namespace kforge {

struct TuneRequest;

struct CompilePipeline {
  int threads = 1;            ///< compile threads; 0: from the cores and memory (compile_threads)
  std::size_t batch = 0;      ///< candidates compiled ahead per batch; 0: each compiled when evaluated
  bool overlap = false;       ///< compiles go on while candidates are measured
  /// A thread's share of a batch is built as one program (Compiler::combines_programs):
  /// only between timed runs, where a compiler pays a fixed front end per program.
  bool combine = false;
  std::size_t per_thread = 2;  ///< a batch's candidates per compile thread
  int code_generators = 0;     ///< worker processes that generate machine code ahead (worker only)
  bool validate_ahead = false;  ///< batches are validated first and timed fastest first
};

/// The plan for `request` on a device of `device_type` whose templates'
/// kind builds with `compiler` (TemplateKind::compiler; null: none, as for
/// library calls and Triton), tuning `templates` templates; `in_worker`:
/// candidates run in a supervised worker process (code generators serve only it).
CompilePipeline plan_compile_pipeline(const TuneRequest& request, DeviceType device_type, const Compiler* compiler,
                                      std::size_t templates, bool in_worker);

/// Threads for compiling ahead: `requested` if > 0, else the CPUs this
/// process may use, capped so that each compile has about 1 GiB of
/// available memory; at least 1.
int compile_threads(int requested);

/// Whether `request` compiles while measuring on a device of `device_type`.
bool compile_overlaps(const TuneRequest& request, DeviceType device_type);

/// How many code-generator processes (RunnerSetup::code_generators) compile
/// `request`'s batches between timed runs for a compiler whose machine code
/// comes as `generation` says: one per compile thread where it is generated
/// at the first launch and cached on disk (PoCL with its kernel cache on),
/// when batches are compiled between timed runs (`batches`) and there is
/// more than one thread.
int code_generators(const TuneRequest& request, const CodeGeneration& generation, bool batches);

}  // namespace kforge
