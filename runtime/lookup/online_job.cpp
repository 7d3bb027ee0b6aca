#include "runtime/lookup/online_job.hpp"

#include "core/bounded_json.hpp"
#include "generator/problem_json.hpp"

namespace kforge {

nlohmann::json to_json(const OnlineJob& job) {
  return {{"db", job.db},
          {"device", job.device},
          {"problem", problem_to_json(job.problem)},
          {"template_dirs", job.template_dirs},
          {"library_policy", job.library_policy},
          {"mode", job.mode},
          {"max_evals", job.max_evals},
          {"time_budget_s", job.time_budget_s},
          {"warm_start", job.warm_start},
          {"lease_wait_s", job.lease_wait_s},
          {"lower_priority", job.lower_priority}};
}

Result<OnlineJob> online_job_from_json(std::string_view text) {
  KF_TRY_ASSIGN(j, parse_json_bounded(text, "online job"));
  try {
    OnlineJob job;
    job.db = j.at("db").get<std::string>();
    job.device = j.at("device").get<std::string>();
    KF_TRY_ASSIGN(problem, problem_from_json(j.at("problem"), "online job"));
    job.problem = std::move(problem);
    job.template_dirs = j.value("template_dirs", std::vector<std::string>{});
    job.library_policy = j.value("library_policy", job.library_policy);
    job.mode = j.value("mode", std::string("background"));
    job.max_evals = j.value("max_evals", 0);
    job.time_budget_s = j.value("time_budget_s", 0.0);
    job.warm_start = j.value("warm_start", 0);
    job.lease_wait_s = j.value("lease_wait_s", 0.0);
    job.lower_priority = j.value("lower_priority", true);
    if (job.db.empty()) return Error::bad_input("online job: db is empty");
    if (job.max_evals < 0) return Error::bad_input("online job: max_evals " + std::to_string(job.max_evals) + " < 0");
    return job;
  } catch (const nlohmann::json::exception& e) {
    return Error::bad_input(std::string("online job: ") + e.what());
  }
}

std::string online_lease_path(const std::string& db) { return db + ".online.lock"; }

}  // namespace kforge
