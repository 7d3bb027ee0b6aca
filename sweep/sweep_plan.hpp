// A sweep plan: operators x shapes x dtypes x layouts (x epilogues x
// attributes) with tuning budgets, read from a versioned JSON file
// (docs/sweep.md) and expanded into an ordered list of tasks, one problem
// each, that `kforge sweep` runs and `--shard I/N` splits.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "generator/problem.hpp"

namespace kforge {

/// The plan format's own version (the `schema_version` field). Bump it when
/// a field changes meaning or a required one is added; docs/sweep.md lists
/// what each version reads.
inline constexpr int kSweepPlanVersion = 1;

/// How hard one problem is tuned: the plan's `budget`, overridden field by
/// field by an entry's `budget`. The defaults are `kforge tune`'s.
struct SweepBudget {
  std::string strategy;        ///< empty: `kforge tune`'s default for max_evals (strategy_to_run)
  int max_evals = 0;           ///< 0: the whole space
  double time_budget_s = 0;    ///< 0: none
  int no_improvement = 0;      ///< 0: never stop for that
  std::uint64_t seed = 1;
  int min_reps = 5, max_reps = 30;
  int warm_start = 0;  ///< TuneRequest::warm_start; 0: none
  bool operator==(const SweepBudget&) const = default;
  /// The strategy named, else default_strategy(max_evals) (tuner/search/strategy_default.hpp).
  std::string strategy_to_run() const;
};

struct SweepTask {
  std::size_t index = 0;  ///< 0-based position in the expanded plan
  /// The normalized problem's key (Problem::key): unique within a plan and
  /// independent of the order of entries, so it names the task everywhere.
  std::string key;
  Problem problem;  ///< normalized
  SweepBudget budget;
  std::string entry;        ///< JSON path of the entry it came from: "entries[2]"
  std::string dtype_path;   ///< JSON path of its dtype, for errors found later
  std::string layout_path;  ///< JSON path of its layout ("entries[2]" when defaulted)
};

struct SweepPlan {
  std::string file;  ///< as given, for messages
  std::string name;  ///< optional `name` field
  SweepBudget budget;
  std::vector<SweepTask> tasks;  ///< entries in order; in each, shapes x dtypes x layouts x epilogues x attrs
};

/// Parses and expands a plan. Every error is kBadInput with one line
/// "FILE: JSON.PATH: what is wrong with VALUE": unknown keys, missing or
/// mistyped fields, unknown operators, dtypes, layouts, epilogues,
/// attributes, strategies, bad dimensions, negative budgets, and a problem
/// planned twice.
Result<SweepPlan> parse_sweep_plan(std::string_view text, const std::string& file);
/// Reads `path` and parses it; a missing or unreadable file is kBadInput.
Result<SweepPlan> load_sweep_plan(const std::string& path);

/// One share of a plan: task i (0-based) belongs to shard (i mod count) + 1.
struct SweepShard {
  int index = 1;  ///< 1-based
  int count = 1;
};
/// Reads "I/N" with 1 <= I <= N; errors name the flag value.
Result<SweepShard> parse_shard(std::string_view text);
bool in_shard(const SweepTask& task, SweepShard shard);
/// The plan's tasks that belong to `shard`, in plan order.
std::vector<SweepTask> shard_tasks(const SweepPlan& plan, SweepShard shard);

}  // namespace kforge
