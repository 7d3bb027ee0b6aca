#include "tuner/online_job_runner.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <iostream>

#include "core/utc_time.hpp"
#include "db/file_lease.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "runtime/device/device_registry.hpp"
#include "runtime/kinds/binary_cache.hpp"
#include "runtime/libraries/library_policy.hpp"
#include "runtime/lookup/online_job.hpp"
#include "tuner/search/strategy_default.hpp"
#include "tuner/template_selection.hpp"
#include "tuner/tuner.hpp"

namespace kforge {

namespace {

/// As `kforge tune --templates DIR` chooses (tuner/template_selection.hpp),
/// under the lookup's library policy.
Result<std::vector<const TemplateSource*>> templates_for(const TemplateCatalog& catalog, const OnlineJob& job,
                                                         const std::string& backend) {
  const auto policy = parse_library_policy(job.library_policy);
  if (!policy) return Error::bad_input("online job: library_policy '" + job.library_policy + "'");
  auto out = select_templates(catalog, job.problem.op, backend, "", !job.template_dirs.empty(), *policy);
  if (out.empty()) return Error::bad_input("online job: no template for " + job.problem.op + " on " + backend);
  return out;
}

TuneRequest request_for(const OnlineJob& job, std::vector<const TemplateSource*> templates,
                        const std::vector<std::string>& worker_command) {
  TuneRequest req;
  req.problem = job.problem;
  req.templates = std::move(templates);
  req.strategy = default_strategy(job.max_evals);
  req.strategy_defaulted = true;
  req.max_evals = job.max_evals;
  req.time_budget_s = job.time_budget_s;
  req.warm_start = job.warm_start;
  req.worker_command = worker_command;
  req.cache_dir = BinaryCache::default_dir();
  req.online_mode = job.mode;
  req.command_line = "online tune (" + job.mode + ") of " + job.problem.key() + " for pid " +
                     std::to_string(::getppid());
  return req;
}

/// The tune itself, the lease held; 0 with a winner.
Result<int> tune(const OnlineJob& job, const std::vector<std::string>& worker_command) {
  KF_TRY_ASSIGN(catalog, TemplateCatalog::builtin());
  for (const auto& dir : job.template_dirs) KF_TRY(catalog.add_dir(dir));
  KF_TRY_ASSIGN(device, open_device(job.device));
  const Operator* op = find_operator(job.problem.op);
  if (op == nullptr) return Error::bad_input("online job: unknown operator '" + job.problem.op + "'");
  KF_TRY_ASSIGN(problem, op->normalize(job.problem));
  OnlineJob normalized = job;
  normalized.problem = problem;
  KF_TRY_ASSIGN(templates, templates_for(catalog, normalized, device->info().backend));
  KF_TRY_ASSIGN(db, Database::open(job.db, Database::Mode::kReadWrite));
  Tuner tuner(*device, *db, *op);
  KF_TRY_ASSIGN(s, tuner.run(request_for(normalized, std::move(templates), worker_command)));
  std::cout << utc_now() << " " << problem.key() << ": " << s.counts.evaluated << " evaluated, " << s.counts.reused
            << " already stored, " << s.counts.failed << " failed";
  if (s.winner) std::cout << "; winner " << s.winner->template_name << " " << s.winner->config;
  std::cout << std::endl;
  return s.winner ? 0 : kOnlineNoWinner;
}

}  // namespace

int run_online_job(std::string_view job_json, const std::vector<std::string>& worker_command) {
  auto job = online_job_from_json(job_json);
  if (!job.ok()) {
    std::cout << "online tune: " << job.error().message << std::endl;
    return kOnlineBadJob;
  }
  if (job->lower_priority) (void)::setpriority(PRIO_PROCESS, 0, 19);
  const std::string lease_path = online_lease_path(job->db);
  auto lease = FileLease::acquire_within(lease_path, "online tune of " + job->problem.key(), job->lease_wait_s);
  if (!lease.ok() || !*lease) {
    std::cout << utc_now() << " " << job->problem.key() << ": not tuned: "
              << (lease.ok() ? "another tuner held " + lease_path + " (" + FileLease::holder(lease_path) + ")"
                             : lease.error().message)
              << std::endl;
    return lease.ok() ? kOnlineLeaseHeld : kOnlineBadJob;
  }
  auto code = tune(*job, worker_command);
  if (!code.ok()) {
    std::cout << utc_now() << " " << job->problem.key() << ": " << code.error().message << std::endl;
    return code.error().code == ErrorCode::kBadInput ? kOnlineBadJob : kOnlineNoWinner;
  }
  return *code;
}

}  // namespace kforge
