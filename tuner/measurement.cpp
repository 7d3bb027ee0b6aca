// Runs the timing protocol.
#include "measurement.hpp"

#include <chrono>

namespace kforge {

nlohmann::json MeasurementProtocol::to_json() const {
  return {{"warmup", warmup},         {"min_reps", min_reps},      {"max_reps", max_reps},
          {"budget_ms", budget_ms},   {"flush_cache", flush_cache}, {"timer", "device events"}};
}

Result<TimingStats> measure(Device& device, Kernel& kernel, const std::vector<KernelArg>& args,
                            const LaunchGeometry& geometry, const MeasurementProtocol& protocol) {
  for (int i = 0; i < protocol.warmup; ++i) {
    KF_TRY_ASSIGN(ms, device.launch(kernel, args, geometry));
    (void)ms;
  }
  std::vector<double> samples;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < protocol.max_reps; ++i) {
    if (protocol.flush_cache) KF_TRY(device.flush_cache());
    KF_TRY_ASSIGN(ms, device.launch(kernel, args, geometry));
    samples.push_back(ms);
    const double spent =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (i + 1 >= protocol.min_reps && spent >= protocol.budget_ms) break;
  }
  return TimingStats::from_samples(std::move(samples));
}

}  // namespace kforge
