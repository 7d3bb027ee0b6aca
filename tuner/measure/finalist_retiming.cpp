// The finalists' re-timing, again when the machine's speed changed or other
// load slowed a candidate down (finalist_retiming.hpp).
#include "tuner/measure/finalist_retiming.hpp"

#include <algorithm>
#include <iomanip>
#include <numeric>
#include <sstream>

namespace kforge {

namespace {

/// Of `among`, the position whose value is the lowest positive one
/// (values.size() when none is positive).
std::size_t fastest(const std::vector<double>& values, const std::vector<std::size_t>& among) {
  std::size_t best = values.size();
  for (std::size_t i : among) {
    if (values[i] > 0 && (best == values.size() || values[i] < values[best])) best = i;
  }
  return best;
}

/// How much of the host other work took while `t` was timed, the larger of
/// two readings (-1 where neither says): other processes' share of the
/// clock ticks, where enough passed (10 ticks: 50 ms on two cores at
/// 100 Hz), and the share of the wall time in which tasks waited for a
/// core (ClockRecord::cpu_wait_share), where the host keeps pressure stall
/// information. Waiting reads about 0 on a quiet host, where ticks over
/// bursty windows read up to 0.6 for others, but misses contention in
/// bursts under about 10 ms: with a busy loop on one of two cores, some
/// 128³ candidates ran twice as long with no wait read while their ticks
/// read 0.4-1.0 (docs/measurement.md, "Clocks"). Taking the larger
/// re-times more candidates, never fewer.
double load_share(const TimingStats& t) {
  constexpr double kMinTicks = 10;
  const double ticks = t.clocks.cpu_ticks >= kMinTicks ? t.clocks.other_cpu_share() : -1.0;
  return std::max(ticks, t.clocks.cpu_wait_share());
}

/// The ok outcomes never re-timed that were timed while other processes
/// used at least protocol.retime_load_share of the host and whose median,
/// scaled by the share of the host they had, is within the finalist window
/// of the winner's (`best`): a kernel on every core of a host of which
/// other processes take a share s runs about 1 / (1 - s) times as long.
/// Nearest first.
std::vector<std::size_t> timed_under_load(const std::vector<CandidateOutcome>& outcomes,
                                          const std::vector<double>& stored, const std::vector<std::size_t>& retimed,
                                          std::size_t best, const MeasurementProtocol& protocol) {
  std::vector<std::pair<double, std::size_t>> out;
  if (protocol.retime_load_share <= 0 || best >= outcomes.size()) return {};
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (i == best || stored[i] <= 0 || std::find(retimed.begin(), retimed.end(), i) != retimed.end()) continue;
    const double share = load_share(outcomes[i].timing);
    if (share < protocol.retime_load_share) continue;
    const double unloaded = stored[i] * (1 - share);
    if (unloaded <= stored[best] * (1 + protocol.finalist_window)) out.push_back({unloaded, i});
  }
  std::stable_sort(out.begin(), out.end());
  std::vector<std::size_t> ids;
  for (const auto& [ms, i] : out) ids.push_back(i);
  return ids;
}

}  // namespace

Status retime_finalists(CandidateRunner& runner, const MeasurementProtocol& protocol, TuneSummary& summary,
                        const StoreRetiming& store) {
  auto& outcomes = summary.outcomes;
  // Each ok outcome's median as stored: the search's, then its last re-timing's.
  std::vector<double> stored;
  for (const auto& o : outcomes) stored.push_back(o.status == CandidateStatus::kOk ? o.timing.median_ms : 0.0);
  std::vector<std::size_t> chosen = choose_finalists(stored, protocol);
  if (chosen.size() < 2 || protocol.finalist_rounds < 1) return ok_status();

  std::vector<std::size_t> order;  // outcomes re-timed, in the order first re-timed
  std::vector<TimingStats> last(outcomes.size());
  const int most = std::max(protocol.finalist_retimings, 1);
  std::vector<std::size_t> every(outcomes.size());
  std::iota(every.begin(), every.end(), std::size_t{0});
  // The next re-timing: `head` and as many of `others` as max_finalists
  // leaves room for; returns how many of them.
  auto next_round = [&](std::size_t head, std::vector<std::size_t> others) {
    const std::size_t room = static_cast<std::size_t>(std::max(protocol.max_finalists, 2)) - 1;
    if (others.size() > room) others.resize(room);
    chosen.assign(1, head);
    chosen.insert(chosen.end(), others.begin(), others.end());
    return static_cast<int>(others.size());
  };
  for (int retiming = 1;; ++retiming) {
    std::vector<CandidateRef> refs;
    for (std::size_t i : chosen) refs.push_back({outcomes[i].template_name, outcomes[i].config});
    auto report = runner.retime(refs);
    if (!report.ok() || report->timings.size() != chosen.size()) break;  // the results so far stand
    summary.pipeline.compiled_alone += report->compiled_alone;
    summary.retiming.retimings = retiming;
    for (std::size_t k = 0; k < chosen.size(); ++k) {
      const std::size_t i = chosen[k];
      KF_TRY(store(outcomes[i], report->timings[k], retiming));
      if (std::find(order.begin(), order.end(), i) == order.end()) order.push_back(i);
      last[i] = report->timings[k];
      stored[i] = last[i].median_ms;
    }
    const std::size_t best = fastest(stored, every);
    const std::size_t lead = fastest(stored, chosen);  // the fastest of this re-timing
    if (best == outcomes.size() || lead == outcomes.size()) break;  // nothing timed: the results stand
    if (std::find(chosen.begin(), chosen.end(), best) != chosen.end()) {
      // Settled, unless candidates timed under other load might have been
      // finalists: they go beside the winner, once each.
      std::vector<std::size_t> loaded = timed_under_load(outcomes, stored, order, best, protocol);
      if (loaded.empty() || retiming >= most) break;
      summary.retiming.retimed_for_load += next_round(best, std::move(loaded));
      continue;
    }

    // Every outcome stored as fast as this re-timing's fastest, or faster.
    std::vector<std::size_t> faster;
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
      if (i != lead && stored[i] > 0 && stored[i] <= stored[lead]) faster.push_back(i);  // ties too
    }
    std::stable_sort(faster.begin(), faster.end(), [&](std::size_t a, std::size_t b) { return stored[a] < stored[b]; });
    if (retiming >= most) {
      std::ostringstream note;
      note << std::setprecision(4) << "after " << retiming << " re-timings " << faster.size()
           << " candidate(s) timed earlier are still stored faster than the last re-timing's fastest, "
           << outcomes[lead].config << " (" << stored[lead] << " ms against " << stored[best]
           << " ms): the machine's speed changed while the finalists were re-timed; the winner is the fastest "
              "as stored";
      summary.retiming.note = note.str();
      break;
    }
    next_round(lead, std::move(faster));
  }
  for (std::size_t i : order) summary.finalists.push_back({outcomes[i], last[i]});

  // The winner as stored: every ok result with its stored median, the
  // re-timed ones' being their last interleaved ones.
  std::optional<CandidateOutcome> winner;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i].status != CandidateStatus::kOk || stored[i] <= 0) continue;
    CandidateOutcome c = outcomes[i];
    if (last[i].count > 0) c.timing = last[i];
    if (!winner || c.timing.median_ms < winner->timing.median_ms) winner = std::move(c);
  }
  if (!order.empty()) summary.winner = winner;
  if (summary.default_result) {
    for (std::size_t i : order) {
      if (outcomes[i].template_name == summary.default_result->template_name &&
          outcomes[i].config == summary.default_result->config) {
        summary.default_result->timing = last[i];  // as stored
      }
    }
  }
  return ok_status();
}

std::string name_beside(const CandidateOutcome& c, const CandidateOutcome& other) {
  return c.template_name == other.template_name ? c.config : c.template_name + " " + c.config;
}

std::optional<std::string> leader_change(const TuneSummary& s, const CandidateOutcome& leader) {
  auto same = [](const CandidateOutcome& a, const CandidateOutcome& b) {
    return a.template_name == b.template_name && a.config == b.config;
  };
  if (!s.winner || same(*s.winner, leader)) return std::nullopt;
  const FinalistTiming* theirs = nullptr;
  const FinalistTiming* ours = nullptr;
  for (const auto& f : s.finalists) {
    if (same(f.outcome, leader)) theirs = &f;
    if (same(f.outcome, *s.winner)) ours = &f;
  }
  std::ostringstream out;
  out.precision(4);
  out << name_beside(*s.winner, leader) << " " << (ours ? ours->interleaved.median_ms : s.winner->timing.median_ms)
      << " ms against " << name_beside(leader, *s.winner) << " ";
  if (theirs && ours) {
    // A finalist's outcome is the search's: its median is the one timed alone.
    out << theirs->interleaved.median_ms << " ms, timed in alternation (the search, which timed each alone at "
        << "another moment, had them at " << ours->outcome.timing.median_ms << " and " << leader.timing.median_ms
        << " ms)";
  } else {
    out << leader.timing.median_ms << " ms in the search";
  }
  if (!s.retiming.note.empty()) out << "; " << s.retiming.note;
  return out.str();
}

}  // namespace kforge
