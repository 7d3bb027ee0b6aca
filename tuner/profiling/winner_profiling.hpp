// After a tune (`kforge tune`, a sweep task): counters for the winner and
// the finalists, stored beside their results (docs/profiling.md). Every one gets the operator's
// byte and flop model and each collector's row; with --profile the
// collectors that can run here run, each in a process of its own.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "generator/operator.hpp"
#include "runtime/device/backend.hpp"
#include "runtime/profiling/counter_collection.hpp"
#include "tuner/tune_summary.hpp"
#include "tuner/tuner.hpp"

namespace kforge {

struct ProfiledResult {
  std::int64_t result_id = 0;
  std::string role;  ///< winner, finalist
  std::string template_name, config;
  std::vector<CounterCollection> collections;  ///< the model's first
};

/// Profiles and stores the winner and the finalists of `s`, tuned with
/// `req` on `device`. `collect`: run the collectors (--profile).
Result<std::vector<ProfiledResult>> profile_winners(Database& db, const Device& device, const Operator& op,
                                                    const TuneRequest& req, const TuneSummary& s,
                                                    bool collect);

/// [{"result_id","role","template","config","counters":[CounterCollection...]}]
nlohmann::json to_json(const std::vector<ProfiledResult>& profiled);

}  // namespace kforge
