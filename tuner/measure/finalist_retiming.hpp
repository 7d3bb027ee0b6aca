// Deciding the winner: the fastest candidates of a search re-timed
// interleaved (measure_interleaved), again if the machine's speed changed
// in between (docs/measurement.md, step 6).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "tuner/candidate_runner.hpp"
#include "tuner/measure/measurement.hpp"
#include "tuner/tuner.hpp"

namespace kforge {

/// Stores a re-timed candidate's interleaved timing as its result;
/// `retiming` counts from 1.
using StoreRetiming = std::function<Status(const CandidateOutcome&, const TimingStats&, int retiming)>;

/// Re-times `summary.outcomes`' finalists (choose_finalists over their search
/// medians) interleaved through `runner`, stores each one's timing through
/// `store`, and declares the winner from the results as stored: every ok
/// outcome's last stored median. The winner must be one the last re-timing
/// timed. When it is not (an outcome timed earlier is faster than every one
/// of the last re-timing: the machine's speed changed in between), the last
/// re-timing's fastest is re-timed again together with every outcome
/// stored faster than it (fastest first, up to `max_finalists` in all), at
/// most `finalist_retimings` re-timings in all. After that the winner
/// stands as stored and summary.retiming.note says why. A settled winner is
/// re-timed once more, within the same limit, beside the candidates timed
/// while other work took at least `retime_load_share` of a CPU device's
/// host whose medians, scaled by the share of the host they had, would have
/// made the finalists (summary.retiming.retimed_for_load counts them).
/// summary.finalists gets each re-timed outcome once, with its last timing,
/// in the order first re-timed. A runner that fails to re-time leaves the
/// results as they are.
Status retime_finalists(CandidateRunner& runner, const MeasurementProtocol& protocol, TuneSummary& summary,
                        const StoreRetiming& store);

/// When the re-timing declared a winner other than the search's `leader`:
/// why, from both interleaved medians where both were re-timed (else the
/// winner's beside the leader's search median), with the retiming note.
/// std::nullopt when the leader won, or there is no winner.
std::optional<std::string> leader_change(const TuneSummary& summary, const CandidateOutcome& leader);
/// How a message names `c` beside `other`: its configuration, with its
/// template's name first where the two templates differ (two templates may
/// share configuration names).
std::string name_beside(const CandidateOutcome& c, const CandidateOutcome& other);

}  // namespace kforge
