// One online tune as a program's lookup hands it to a tuner process
// (runtime/lookup/online_tuning.hpp starts it; tuner/online_job_runner.hpp runs
// it): a JSON document on the process's command line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "generator/problem.hpp"

namespace kforge {

struct OnlineJob {
  std::string db;      ///< the user database the results and the winner land in
  std::string device;  ///< the device's hardware key (an open_device selector)
  Problem problem;
  std::vector<std::string> template_dirs;  ///< the lookup's user template directories
  std::string library_policy = "compare";  ///< the lookup's policy for the operator
  std::string mode;                        ///< "background" or "blocking", recorded in the sweep's settings
  int max_evals = 0;                       ///< candidates, stored ones included (so a rerun resumes)
  double time_budget_s = 0;
  int warm_start = 0;       ///< tuned neighbours proposed after the default (TuneRequest::warm_start)
  double lease_wait_s = 0;  ///< how long to wait while another tuner holds the database's lease
  bool lower_priority = true;  ///< nice 19, so that the program's own host work goes first
};

nlohmann::json to_json(const OnlineJob& job);
/// The job `text` describes; kBadInput naming the field at fault.
Result<OnlineJob> online_job_from_json(std::string_view text);

/// "DB.online.lock": one online tuner per database at a time, so that two
/// programs missing the same problem tune it once and tuners never time
/// candidates against each other.
std::string online_lease_path(const std::string& db);

}  // namespace kforge
