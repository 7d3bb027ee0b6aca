// The tuner's entry point: each run is one TuningSession (tuning_session.hpp).
#include "tuner/tuner.hpp"

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

Result<TuneSummary> Tuner::run(const TuneRequest& request, const std::function<void(const TuneEvent&)>& on_event) {
  return TuningSession(device_, db_, op_, request, on_event).run();
}

}  // namespace kforge
