// Runs the timing protocol: adaptive repetitions, early cut, interleaved
// finalists, the device's clocks read after each timed launch.
#include "tuner/measure/measurement.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

namespace kforge {

nlohmann::json MeasurementProtocol::to_json() const {
  return {{"warmup", warmup},
          {"min_reps", min_reps},
          {"max_reps", max_reps},
          {"budget_ms", budget_ms},
          {"flush_cache", flush_cache},
          {"ci_rel_width", ci_rel_width},
          {"ci_confidence", 0.95},
          {"cut_ratio", cut_ratio},
          {"cut_after", cut_after},
          {"stop_outside_window", stop_outside_window},
          {"finalists", finalists},
          {"finalist_window", finalist_window},
          {"max_finalists", max_finalists},
          {"finalist_rounds", finalist_rounds},
          {"finalist_race_after", finalist_race_after},
          {"finalist_retimings", finalist_retimings},
          {"retime_load_share", retime_load_share},
          {"timer", "device events"}};
}

Result<TimingStats> measure(Device& device, Kernel& kernel, const std::vector<KernelArg>& args,
                            const LaunchGeometry& geometry, const MeasurementProtocol& protocol,
                            double best_ms, std::span<const double> earlier_ms,
                            const std::function<bool()>& check_first) {
  return measure(device, kernel, args, geometry, protocol, best_ms, earlier_ms, device.clock_reader(), check_first);
}

Result<TimingStats> measure(Device& device, Kernel& kernel, const std::vector<KernelArg>& args,
                            const LaunchGeometry& geometry, const MeasurementProtocol& protocol,
                            double best_ms, std::span<const double> earlier_ms, ClockReader* clocks,
                            const std::function<bool()>& check_first) {
  ClockRecord record;
  if (clocks) record.source = clocks->source();
  for (int i = 0; i < protocol.warmup; ++i) {
    KF_TRY_ASSIGN(ms, device.launch(kernel, args, geometry));
    (void)ms;
  }
  std::vector<double> samples;
  TimingStop stop = TimingStop::kMaxReps;
  // The fastest launch seen, earlier ones included: the cut's evidence.
  double fastest = std::numeric_limits<double>::infinity();
  for (double ms : earlier_ms) fastest = std::min(fastest, ms);
  const auto start = std::chrono::steady_clock::now();
  // The readings cover the timed launches, and the launches of `earlier_ms`
  // where there are some: the caller restarted the reader before those.
  if (clocks && earlier_ms.empty()) clocks->restart();
  for (int i = 0; i < protocol.max_reps; ++i) {
    if (protocol.flush_cache) KF_TRY(device.flush_cache());
    KF_TRY_ASSIGN(ms, device.launch(kernel, args, geometry));
    samples.push_back(ms);
    if (clocks) record.add(clocks->read());
    if (i == 0 && check_first && !check_first()) {
      stop = TimingStop::kRejected;
      break;
    }
    fastest = std::min(fastest, ms);
    const int n = i + 1;
    const int launches = n + static_cast<int>(earlier_ms.size());
    if (protocol.cut_ratio > 0 && best_ms > 0 && launches >= protocol.cut_after && n < protocol.max_reps &&
        fastest > protocol.cut_ratio * best_ms) {
      stop = TimingStop::kCut;
      break;
    }
    if (n < protocol.min_reps || n >= protocol.max_reps) continue;
    const MedianInterval ci = median_interval(samples);
    if (protocol.ci_rel_width > 0) {
      const double median = median_of(samples);
      if (ci.coverage >= 0.95 && median > 0 && (ci.high_ms - ci.low_ms) <= protocol.ci_rel_width * median) {
        stop = TimingStop::kCi;
        break;
      }
    }
    // Far enough from the best that its median will not be re-timed for
    // being close: more samples would only sharpen a number nobody ranks.
    if (protocol.stop_outside_window && best_ms > 0 && ci.coverage >= 0.95 &&
        ci.low_ms > (1 + protocol.finalist_window) * best_ms) {
      stop = TimingStop::kOutsideWindow;
      break;
    }
    const double spent =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (spent >= protocol.budget_ms) {
      stop = TimingStop::kBudget;
      break;
    }
  }
  TimingStats stats = TimingStats::from_samples(std::move(samples));
  stats.stop = stop;
  stats.clocks = std::move(record);
  return stats;
}

std::vector<std::size_t> choose_finalists(const std::vector<double>& medians_ms, const MeasurementProtocol& protocol) {
  std::vector<std::size_t> ok;
  for (std::size_t i = 0; i < medians_ms.size(); ++i) {
    if (medians_ms[i] > 0) ok.push_back(i);
  }
  std::stable_sort(ok.begin(), ok.end(), [&](std::size_t a, std::size_t b) { return medians_ms[a] < medians_ms[b]; });
  const std::size_t least = static_cast<std::size_t>(std::max(protocol.finalists, 0));
  const std::size_t most = std::max(least, static_cast<std::size_t>(std::max(protocol.max_finalists, 0)));
  std::size_t take = std::min(least, ok.size());
  while (take < ok.size() && take < most &&
         medians_ms[ok[take]] <= (1 + protocol.finalist_window) * medians_ms[ok[0]]) {
    ++take;
  }
  ok.resize(take);
  return ok;
}

Result<std::vector<TimingStats>> measure_interleaved(Device& device, const std::vector<Finalist>& finalists,
                                                     const MeasurementProtocol& protocol) {
  return measure_interleaved(device, finalists, protocol, device.clock_reader());
}

Result<std::vector<TimingStats>> measure_interleaved(Device& device, const std::vector<Finalist>& finalists,
                                                     const MeasurementProtocol& protocol, ClockReader* clocks) {
  std::vector<std::vector<double>> samples(finalists.size());
  std::vector<ClockRecord> records(finalists.size());
  for (auto& r : records) r.source = clocks ? clocks->source() : std::string();
  for (const auto& f : finalists) {  // one warm-up each: caches of code and data in a known state
    KF_TRY_ASSIGN(ms, device.launch(*f.kernel, *f.args, f.geometry));
    (void)ms;
  }
  // A race: from round `finalist_race_after` on, a finalist slower than the
  // leader (the lowest median so far) in every round so far is dropped. Of
  // two equally fast, one loses five rounds in a row one time in 32, and one
  // faster than the leader more rarely still; a clearly slower one loses
  // them all, and the rounds go to the finalists still close.
  const std::size_t n = finalists.size();
  if (clocks) clocks->restart();
  std::vector<bool> active(n, true);
  std::vector<TimingStop> stops(n, TimingStop::kInterleaved);
  std::size_t racing = n;
  // Each round starts one finalist later (A B C, B C A, C A B, ...), so no
  // finalist always opens a round or always follows the same one: an effect
  // of the order, where a device has one, touches every finalist alike.
  for (int round = 0; round < protocol.finalist_rounds && (racing > 1 || racing == n); ++round) {
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = (static_cast<std::size_t>(round) + k) % n;
      if (!active[i]) continue;
      if (protocol.flush_cache) KF_TRY(device.flush_cache());
      KF_TRY_ASSIGN(ms, device.launch(*finalists[i].kernel, *finalists[i].args, finalists[i].geometry));
      samples[i].push_back(ms);
      if (clocks) records[i].add(clocks->read());
    }
    if (protocol.finalist_race_after <= 0 || round + 1 < protocol.finalist_race_after) continue;
    std::size_t leader = n;
    double leader_median = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (!active[i]) continue;
      const double m = median_of(samples[i]);
      if (leader == n || m < leader_median) {
        leader = i;
        leader_median = m;
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (!active[i] || i == leader) continue;
      // Active finalists launched in every round so far: samples align.
      bool lost_all = true;
      for (std::size_t r = 0; r < samples[i].size() && lost_all; ++r) lost_all = samples[i][r] > samples[leader][r];
      if (!lost_all) continue;
      active[i] = false;
      stops[i] = TimingStop::kRaced;
      --racing;
    }
  }
  std::vector<TimingStats> out;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    out.push_back(TimingStats::from_samples(std::move(samples[i])));
    out.back().stop = stops[i];
    out.back().clocks = std::move(records[i]);
  }
  return out;
}

}  // namespace kforge
