// The SQLite tuning database: WAL, busy timeout, BEGIN IMMEDIATE writes,
// PRAGMA user_version migrations, parameterized statements only.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "records.hpp"
#include "result.hpp"

struct sqlite3;

namespace kforge {

/// Current schema version; each step from 1 has a migration in schema.cpp.
inline constexpr int kSchemaVersion = 2;

class Database {
 public:
  enum class Mode { kReadWrite, kReadOnly };

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
  /// template) in the same transaction. A result already stored for the same
  /// (device, template, problem, config) is kept and the new one ignored.
  Result<bool> add_result(const ResultRecord& r);

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

 private:
  Database(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
};

}  // namespace kforge
