// profile_winners: which results, which setup, then the stored rows.
#include "tuner/profiling/winner_profiling.hpp"

#include <filesystem>
#include <random>

#include "generator/instance.hpp"
#include "tuner/profiling/counter_profiler.hpp"
#include "tuner/runner_options.hpp"

namespace kforge {
namespace {

/// A private scratch directory for setup files and profiler logs, removed on the way out.
struct ScratchDir {
  std::filesystem::path path;
  ScratchDir() {
    std::random_device rd;
    path = std::filesystem::temp_directory_path() / ("kforge-profile-" + std::to_string(rd()));
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

ProfileSetup setup_for(const Device& device, const Problem& problem, const TuneRequest& req, bool collect,
                       const std::string& work_dir, const std::string& self) {
  ProfileSetup s;
  s.runner.device_selector = device.info().selector;
  s.runner.problem = problem;
  for (const TemplateSource* t : req.templates) s.runner.template_origins.push_back(t->origin);
  s.runner.workload_seed = req.seed;
  s.runner.protocol = req.protocol;
  s.runner.cache_dir = req.cache_dir;
  s.launcher = {self, "__profile-launch"};
  s.device = device.info();
  s.collect = collect;
  s.work_dir = work_dir;
  return s;
}

/// The winner first, then the other finalists, each once.
std::vector<std::pair<std::string, const CandidateOutcome*>> targets_of(const TuneSummary& s) {
  std::vector<std::pair<std::string, const CandidateOutcome*>> out;
  auto add = [&](const std::string& role, const CandidateOutcome& o) {
    for (const auto& [r, seen] : out) {
      if (seen->template_name == o.template_name && seen->config == o.config) return;
    }
    out.emplace_back(role, &o);
  };
  if (s.winner) add("winner", *s.winner);
  for (const FinalistTiming& f : s.finalists) add("finalist", f.outcome);
  return out;
}

}  // namespace

Result<std::vector<ProfiledResult>> profile_winners(Database& db, const Device& device, const Operator& op,
                                                    const TuneRequest& req, const TuneSummary& s,
                                                    bool collect) {
  KF_TRY_ASSIGN(problem, op.normalize(req.problem));
  KF_TRY_ASSIGN(stored, db.results({device.info().hardware_key(), problem.key(), std::nullopt}));
  ScratchDir scratch;
  KF_TRY_ASSIGN(self, self_executable());
  const ProfileSetup setup = setup_for(device, problem, req, collect, scratch.path.string(), self);
  std::vector<ProfiledResult> out;
  for (const auto& [role, outcome] : targets_of(s)) {
    const ResultRecord* row = nullptr;
    for (const ResultRecord& r : stored) {
      if (r.template_name == outcome->template_name && r.config == outcome->config && r.status == "ok")
        row = &r;
    }
    if (!row) continue;
    ProfileTarget target{row->id, outcome->template_name, outcome->config, {}};
    for (const TemplateSource* t : req.templates) {
      if (t->manifest.name == target.template_name && !t->manifest.is_library()) {
        target.kernel_name = kernel_name_for(t->manifest.kernel, target.config);
      }
    }
    ProfiledResult& p = out.emplace_back();
    p.result_id = row->id;
    p.role = role;
    p.template_name = outcome->template_name;
    p.config = outcome->config;
    p.collections.push_back(model_collection(op.bytes(problem), op.flops(problem)));
    for (CounterCollection& c : profile_target(setup, target)) p.collections.push_back(std::move(c));
    for (const CounterCollection& c : p.collections) {
      KF_TRY(db.replace_counters(row->id, c.collector, counter_rows(c, row->id)));
    }
  }
  return out;
}

nlohmann::json to_json(const std::vector<ProfiledResult>& profiled) {
  nlohmann::json out = nlohmann::json::array();
  for (const ProfiledResult& p : profiled) {
    nlohmann::json counters = nlohmann::json::array();
    for (const CounterCollection& c : p.collections) counters.push_back(kforge::to_json(c));
    out.push_back({{"result_id", p.result_id},
                   {"role", p.role},
                   {"template", p.template_name},
                   {"config", p.config},
                   {"counters", counters}});
  }
  return out;
}

}  // namespace kforge
