// The tuner's entry point: each run is one TuningSession (tuning_session.hpp).
#include "tuner/tuner.hpp"

#include "tuner/in_process_runner.hpp"
#include "tuner/tuning_session.hpp"
#include "tuner/worker/worker_runner.hpp"

namespace kforge {

std::string rerun_command(const Problem& p, const std::string& template_name, const std::string& config,
                          const std::string& template_dir, const std::string& db, const std::string& device) {
  return "kforge tune" + (device.empty() ? "" : " --device " + device) + (template_dir.empty() ? "" : " --template " + template_dir) + " --op " + p.op +
         (db.empty() ? "" : " --db " + db) + " --shape " + p.dims_string() + " --dtype " +
         std::string(dtype_name(p.dtype)) + " --layout " + p.layout.name() +
         (p.epilogue.plain() ? "" : " --epilogue " + p.epilogue.name()) +
         (p.attrs.empty() ? "" : " --attr " + p.attrs_string()) + " --only-template " + template_name +
         " --config " + config;
}

Tuner::Tuner(Device& device, Database& db, const Operator& op) : device_(device), db_(db), op_(op) {}

int code_generators(const TuneRequest& request, const CodeGeneration& generation, bool batches) {
  // A compiler that generates a kernel's machine code at its first launch
  // (PoCL, one program at a time per process) and caches it on disk for
  // every process gains from generating it ahead; others gain nothing.
  if (!batches || !generation.at_first_launch || !generation.cached_on_disk) return 0;
  const int threads = InProcessRunner::compile_threads(request.compile_threads);
  return threads > 1 ? threads : 0;
}

bool compile_overlaps(const TuneRequest& request, DeviceType device_type) {
  switch (request.compile_overlap) {
    case TuneRequest::CompileOverlap::kOn: return true;
    case TuneRequest::CompileOverlap::kOff: return false;
    case TuneRequest::CompileOverlap::kAuto: break;
  }
  return device_type != DeviceType::kCpu;
}

Result<TuneSummary> Tuner::run(const TuneRequest& request, const std::function<void(const TuneEvent&)>& on_event) {
  return TuningSession(device_, db_, op_, request, on_event).run();
}

}  // namespace kforge
