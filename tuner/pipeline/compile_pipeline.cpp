// The compile pipeline's plan (compile_pipeline.hpp).
#include "tuner/pipeline/compile_pipeline.hpp"

#include <unistd.h>

#include <algorithm>

#include "runtime/device/host/host_cpus.hpp"
#include "tuner/tuner.hpp"

namespace kforge {

CompilePipeline plan_compile_pipeline(const TuneRequest& request, DeviceType device_type, const Compiler* compiler,
                                      std::size_t templates, bool in_worker) {
  CompilePipeline p;
  p.threads = compile_threads(std::max(0, request.compile_threads));
  const bool compiles_ahead = request.compile_threads >= 0;
  p.overlap = compiles_ahead && compile_overlaps(request, device_type);
  // Batches compiled ahead: twice the compile threads, so each batch keeps
  // them busy. Between timed runs, where the compiler combines programs
  // (PoCL), eight per thread: each thread's share is built as one program,
  // whose front end it then shares (docs/measurement.md, "Combined programs").
  p.combine = !p.overlap && compiler && compiler->combines_programs();
  p.per_thread = p.combine ? 8 : 2;
  p.batch = compiles_ahead ? p.per_thread * static_cast<std::size_t>(p.threads) : 0;
  p.code_generators = in_worker && compiler
                          ? code_generators(request, compiler->code_generation(), p.batch > 0 && !p.overlap)
                          : 0;
  // A fixed-order strategy's batch compiled between timed runs is validated
  // first and timed fastest first: its slow candidates are then cut against
  // its fastest instead of being timed in full while the best so far is a
  // slow one (docs/measurement.md, "Time the batch's fastest first").
  // Evaluation order changes nothing else such a strategy proposes, and the
  // set an evaluation budget evaluates stays the strategy's: a batch never
  // holds more than the budget leaves, so the whole run is evaluated, except
  // where templates share the budget turn by turn. Then how much of a run a
  // template's turns reach depends on the others, and its candidates are
  // timed in the strategy's order.
  p.validate_ahead =
      request.fastest_first && p.batch > 0 && !p.overlap && (request.max_evals <= 0 || templates == 1);
  return p;
}

int compile_threads(int requested) {
  if (requested > 0) return requested;
  // The CPUs this process may use (its affinity and cgroup quota), not every
  // online one: a pool sized for the host oversubscribes a pinned tuner.
  const long cores = usable_cpus();
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const long by_memory =
      pages > 0 && page > 0 ? static_cast<long>((static_cast<double>(pages) * page) / (1L << 30)) : cores;
  return static_cast<int>(std::max(1L, std::min(cores, by_memory)));
}

bool compile_overlaps(const TuneRequest& request, DeviceType device_type) {
  switch (request.compile_overlap) {
    case TuneRequest::CompileOverlap::kOn: return true;
    case TuneRequest::CompileOverlap::kOff: return false;
    case TuneRequest::CompileOverlap::kAuto: break;
  }
  return device_type != DeviceType::kCpu;
}

int code_generators(const TuneRequest& request, const CodeGeneration& generation, bool batches) {
  // A compiler that generates a kernel's machine code at its first launch
  // (PoCL, one program at a time per process) and caches it on disk for
  // every process gains from generating it ahead; others gain nothing.
  if (!batches || !generation.at_first_launch || !generation.cached_on_disk) return 0;
  const int threads = compile_threads(request.compile_threads);
  return threads > 1 ? threads : 0;
}

}  // namespace kforge
