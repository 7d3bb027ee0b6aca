// The SQLite tuning database: WAL, busy timeout, BEGIN IMMEDIATE writes,
// PRAGMA user_version migrations, parameterized statements only.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <set>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "db/records.hpp"

struct sqlite3;

namespace kforge {

/// Current schema version; each step from 1 has a migration in schema.cpp.
inline constexpr int kSchemaVersion = 5;

/// Whether `source` is one a counters row may name (ncu, cupti, perf,
/// rocprofiler, model, unavailable).
bool is_counter_source(std::string_view source);

class Database {
 public:
  /// kImmutable: read-only, and SQLite is told the file cannot change (URI
  /// parameter immutable=1): no locks, no -wal or -shm file is created or
  /// read. For a shipped database in a place nobody writes (a WAL database in
  /// a read-only directory can be read no other way); a change made while it
  /// is open may read as corruption.
  enum class Mode { kReadWrite, kReadOnly, kImmutable };

  /// Read-write creates the file if missing and migrates it to kSchemaVersion.
  /// Read-only requires an existing file at kSchemaVersion. A file that is not
  /// a SQLite database, is truncated or corrupt, or comes from a newer kforge
  /// gives a kBadInput error naming the file; nothing is written to it.
  static Result<std::unique_ptr<Database>> open(const std::string& path, Mode mode);
  /// Opens read-write and applies migrations only up to `version` (tests of migrations).
  static Result<std::unique_ptr<Database>> open_at_version(const std::string& path, int version);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  const std::string& path() const { return path_; }
  int schema_version() const;

  Result<std::int64_t> put_device(const DeviceRecord& d);      ///< insert or find by key
  Result<std::int64_t> put_template(const TemplateRecord& t);  ///< insert or find by (name, hash)
  Result<std::int64_t> put_problem(const ProblemRecord& p);    ///< insert or find by key
  Result<std::int64_t> begin_sweep(const SweepRecord& s);
  Status finish_sweep(std::int64_t sweep_id, const std::string& finished_at);

  /// Configurations already stored for (device, template version, problem).
  Result<std::set<std::string>> stored_configs(std::int64_t device_id, std::int64_t template_id,
                                               std::int64_t problem_id);
  /// Commits one result and refreshes the winner of its (device, problem,
  /// template) in the same transaction. The winner is the fastest ok result
  /// whose configuration the template version's stored manifest declares
  /// (TemplateManifest::check_declared_name): a tampered row never wins. A result already stored for the same
  /// (device, template, problem, config) is kept and the new one ignored.
  Result<bool> add_result(const ResultRecord& r);
  /// add_result, except that a result already stored for the same (device,
  /// template, problem, config) is replaced by r, and the winner chosen
  /// again: how `tune --config` reruns a configuration.
  Status replace_result(const ResultRecord& r);
  /// Replaces the timing (median, percentiles, min, max, count, samples) and
  /// the reason of the stored ok result of (device, template version,
  /// problem, config) with r's, and refreshes the winner of its (device,
  /// problem, template), in one transaction: how re-timed finalists become
  /// the results the winner is chosen from. kNotFound when no such ok result.
  /// The clock record under "clocks" in r.resources_json replaces the stored
  /// one (none: the stored one is removed); other resources stay.
  Status replace_timing(const ResultRecord& r);
  /// Recomputes the winner of (device, template version, problem) by the
  /// add_result rule, in its own transaction: a run that stored nothing new
  /// still leaves no undeclared (tampered) row in the winner slot.
  Status refresh_winner(std::int64_t device_id, std::int64_t template_id, std::int64_t problem_id);

  /// Replaces what `collector` stored for result `result_id` with `rows`, in
  /// one transaction (database_counters.cpp); the result row itself, its
  /// timing included, is never touched. Each row's collector must be
  /// `collector` and its source a known one; a value is required except on an
  /// unavailable row, which needs a note. Bad rows are kBadInput naming the
  /// field and value; an unknown result is kNotFound.
  Status replace_counters(std::int64_t result_id, const std::string& collector,
                          const std::vector<CounterRecord>& rows);
  /// Stored counters of the given results (empty: every result), by result,
  /// collector and insertion order.
  Result<std::vector<CounterRecord>> counters(const std::vector<std::int64_t>& result_ids = {});
  /// Id of the stored result of (device, template version, problem, config),
  /// or none: how imported counters find the result they belong to.
  Result<std::optional<std::int64_t>> result_id(std::int64_t device_id, std::int64_t template_id,
                                                std::int64_t problem_id, const std::string& config);

  /// Stores a measured ceiling of the device with key `r.device_key` (which
  /// must be stored), replacing that device's earlier value of the same name
  /// (database_ceilings.cpp). A non-finite or non-positive value, or an
  /// unknown name, is kBadInput naming it.
  Status put_measured_ceiling(const MeasuredCeilingRecord& r);
  /// Every measured ceiling, by device key and name.
  Result<std::vector<MeasuredCeilingRecord>> measured_ceilings();

  struct ResultFilter {
    std::optional<std::string> device_key, problem_key, template_name;
  };
  Result<std::vector<ResultRecord>> results(const ResultFilter& f = {});
  struct WinnerFilter {
    std::optional<std::string> device_key, op, dtype, layout, problem_key;
  };
  Result<std::vector<WinnerRecord>> winners(const WinnerFilter& f = {});
  Result<std::vector<DeviceRecord>> devices();
  Result<std::vector<TemplateRecord>> templates();  ///< every stored version, by id
  Result<std::vector<ProblemRecord>> problems();
  Result<std::vector<SweepRecord>> sweeps();

  /// What merge_from added (database_merge.cpp).
  struct MergeReport {
    std::int64_t devices = 0, templates = 0, problems = 0, sweeps = 0, results = 0;
    std::int64_t counters = 0;  ///< counter rows added (a result's rows already stored here are kept)
    /// Results of `other` whose (device, template, problem, config) was already
    /// stored here: the stored row is kept, as add_result does.
    std::int64_t duplicate_results = 0;
    std::int64_t winners_changed = 0;  ///< winner rows inserted or replaced
  };
  /// Adds every device, template version, problem, sweep and result of the
  /// database at `other_path` to this one, in one transaction (all or
  /// nothing), and recomputes the winners. Rows are matched by their natural
  /// keys, never by id; a sweep is matched by its whole content, so merging
  /// the same file twice adds nothing. `other` is opened read-only and checked
  /// whole (quick_check) first: a newer, older, corrupt or missing file is a
  /// kBadInput error naming it, and this database is left untouched.
  Result<MergeReport> merge_from(const std::string& other_path);

  /// What verify found (database_verify.cpp).
  struct IntegrityReport {
    int schema_version = 0;
    std::int64_t devices = 0, templates = 0, problems = 0, sweeps = 0, results = 0, winners = 0;
    std::int64_t counters = 0;           ///< counter rows, availability rows included
    std::int64_t unfinished_sweeps = 0;  ///< killed or still running
    /// One line per finding (integrity_check, foreign_key_check, a winner
    /// that is not the fastest declared ok result of its triple); empty when healthy.
    std::vector<std::string> findings;
  };
  /// Full integrity check of the file and of kforge's invariants. Reads only.
  Result<IntegrityReport> verify();

  struct MigrateReport {
    int from = 0, to = 0;  ///< schema versions before and after
  };
  /// Migrates the existing file at `path` to kSchemaVersion, each step in its
  /// own transaction (database_migrate.cpp). A missing file is kBadInput and
  /// nothing is created; newer, corrupt or foreign files fail as open() does.
  static Result<MigrateReport> migrate(const std::string& path);

 private:
  /// add_result (replace false) or replace_result (true).
  Result<bool> put_result(const ResultRecord& r, bool replace);
  /// Makes the fastest declared ok result of the triple its winner (ties:
  /// the earliest); with none, the triple has no winner. In the caller's transaction.
  Status update_winner(std::int64_t device_id, std::int64_t template_id, std::int64_t problem_id,
                       const std::string& now);
  Database(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
};

}  // namespace kforge
