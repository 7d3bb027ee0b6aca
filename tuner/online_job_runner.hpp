// The tuner process of an online tune (runtime/lookup/online_tuning.hpp): `kforge
// __online-tune JOB` and `python -m kforge._online_tune JOB` run this.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kforge {

/// Exit statuses of run_online_job, besides 0 (a winner stored).
inline constexpr int kOnlineNoWinner = 1;    ///< tuned, no candidate passed
inline constexpr int kOnlineBadJob = 2;      ///< the job or what it names is wrong
inline constexpr int kOnlineLeaseHeld = 3;   ///< another tuner held the database for lease_wait_s

/// Tunes the job's problem on its device into its database, holding the
/// database's online lease (online_lease_path) for the run, under the
/// job's budget, its candidates in `worker_command`'s process. Prints what
/// it does (the lookup appends it to DB.online.log).
int run_online_job(std::string_view job_json, const std::vector<std::string>& worker_command);

}  // namespace kforge
