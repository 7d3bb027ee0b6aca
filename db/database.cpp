// The SQLite tuning database: opening (validate, then migrate), and the typed
// queries over a small RAII statement wrapper. Values always travel as bound
// parameters; SQL text is constant (filters only append constant fragments).
#include "db/database.hpp"
#include "db/sql_steps.hpp"

#include <sqlite3.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/bounded_json.hpp"
#include "db/schema.hpp"
#include "db/sql_functions.hpp"

namespace kforge {
namespace {

constexpr int kBusyTimeoutMs = 10'000;

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using DbHandle = std::unique_ptr<sqlite3, DbCloser>;

/// An SQLite failure: kDatabase, naming the file.
Error db_error(sqlite3* db, const std::string& path) {
  return {ErrorCode::kDatabase, path + ": " + sqlite3_errmsg(db), {}};
}

/// A failure while reading an existing file during open: the file is at fault.
Error file_error(sqlite3* db, const std::string& path) {
  const std::string msg = sqlite3_errmsg(db);
  switch (sqlite3_errcode(db) & 0xff) {
    case SQLITE_NOTADB:
      return Error::bad_input(path + ": not a SQLite database (" + msg + ")");
    case SQLITE_CORRUPT:
      return Error::bad_input(path + ": database is corrupt: " + msg);
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return Error::bad_input(path + ": cannot open: " + msg);
    default:
      return db_error(db, path);
  }
}

/// One prepared statement. Binds go to successive parameters; a failed bind
/// is reported by the next step.
class Statement {
 public:
  static Result<Statement> prepare(sqlite3* db, const std::string& path, std::string_view sql) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &st, nullptr) !=
        SQLITE_OK) {
      sqlite3_finalize(st);
      return db_error(db, path);
    }
    return Statement(db, path, st);
  }

  Statement& bind_int(std::int64_t v) { return note(sqlite3_bind_int64(st_.get(), next_++, v)); }
  Statement& bind_real(double v) { return note(sqlite3_bind_double(st_.get(), next_++, v)); }
  Statement& bind_text(std::string_view v) {
    return note(sqlite3_bind_text(st_.get(), next_++, v.data(), static_cast<int>(v.size()),
                                  SQLITE_TRANSIENT));
  }
  Statement& bind_null() { return note(sqlite3_bind_null(st_.get(), next_++)); }
  Statement& bind_text_or_null(std::string_view v) { return v.empty() ? bind_null() : bind_text(v); }
  Statement& bind_id_or_null(std::int64_t v) { return v == 0 ? bind_null() : bind_int(v); }

  /// True when a row is ready, false when the statement is done.
  Result<bool> step() {
    if (bind_rc_ != SQLITE_OK) return db_error(db_, *path_);
    const int rc = sqlite3_step(st_.get());
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return db_error(db_, *path_);
  }
  /// Steps to the end, ignoring rows.
  Status run() {
    for (;;) {
      KF_TRY_ASSIGN(row, step());
      if (!row) return ok_status();
    }
  }

  std::int64_t int64(int col) const { return sqlite3_column_int64(st_.get(), col); }
  double real(int col) const { return sqlite3_column_double(st_.get(), col); }
  std::string text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st_.get(), col));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(st_.get(), col)))
             : std::string();
  }

 private:
  struct Finalizer {
    void operator()(sqlite3_stmt* st) const { sqlite3_finalize(st); }
  };
  Statement(sqlite3* db, const std::string& path, sqlite3_stmt* st)
      : db_(db), path_(&path), st_(st) {}
  Statement& note(int rc) {
    if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
    return *this;
  }

  sqlite3* db_;
  const std::string* path_;
  std::unique_ptr<sqlite3_stmt, Finalizer> st_;
  int next_ = 1;
  int bind_rc_ = SQLITE_OK;
};

/// Runs constant SQL that takes no parameters (pragmas, DDL scripts).
Status exec(sqlite3* db, const std::string& path, std::string_view sql) {
  while (!sql.empty()) {
    sqlite3_stmt* raw = nullptr;
    const char* tail = nullptr;
    if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &raw, &tail) !=
        SQLITE_OK) {
      sqlite3_finalize(raw);
      return db_error(db, path);
    }
    sql.remove_prefix(static_cast<std::size_t>(tail - sql.data()));
    if (!raw) continue;  // whitespace or a comment
    std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> st(raw, sqlite3_finalize);
    int rc;
    while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
    }
    if (rc != SQLITE_DONE) return db_error(db, path);
  }
  return ok_status();
}

/// BEGIN IMMEDIATE ... COMMIT; rolls back unless committed.
class Transaction {
 public:
  static Result<Transaction> begin(sqlite3* db, const std::string& path) {
    KF_TRY(exec(db, path, "BEGIN IMMEDIATE"));
    return Transaction(db, path);
  }
  Transaction(Transaction&& o) noexcept : db_(std::exchange(o.db_, nullptr)), path_(o.path_) {}
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction() {
    if (db_ && !sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  Status commit() {
    KF_TRY(exec(db_, *path_, "COMMIT"));
    db_ = nullptr;
    return ok_status();
  }

 private:
  Transaction(sqlite3* db, const std::string& path) : db_(db), path_(&path) {}
  sqlite3* db_;
  const std::string* path_;
};

Result<int> user_version(sqlite3* db, const std::string& path) {
  KF_TRY_ASSIGN(st, Statement::prepare(db, path, "PRAGMA user_version"));
  KF_TRY_ASSIGN(row, st.step());
  if (!row) return Error::internal(path + ": PRAGMA user_version returned no row");
  return static_cast<int>(st.int64(0));
}

/// Runs a read-only statement while checking a file during open and returns
/// the first column of every row; failures are the file's fault (file_error).
Result<std::vector<std::string>> check_rows(sqlite3* db, const std::string& path,
                                            std::string_view sql) {
  auto st = Statement::prepare(db, path, sql);
  if (!st) return file_error(db, path);
  std::vector<std::string> rows;
  for (;;) {
    auto row = st->step();
    if (!row) return file_error(db, path);
    if (!*row) return rows;
    rows.push_back(st->text(0));
  }
}

/// Checks, reading only, that `db` is a healthy kforge database no newer than
/// this build; returns its user_version.
Result<int> validate(sqlite3* db, const std::string& path, bool full_check) {
  // Reads the header: "file is not a database", or a truncated file whose
  // header counts more pages than it holds.
  KF_TRY(check_rows(db, path, "PRAGMA schema_version"));
  if (full_check) {
    KF_TRY_ASSIGN(issues, check_rows(db, path, "PRAGMA quick_check"));
    if (issues.empty() || issues.front() != "ok") {
      std::string first = issues.empty() ? std::string("quick_check failed") : issues.front();
      for (char& c : first) {
        if (c == '\n') c = ' ';  // findings may span lines; errors are one line
      }
      return Error::bad_input(path + ": database is corrupt: " + first);
    }
  }
  KF_TRY_ASSIGN(objects, check_rows(db, path, "SELECT count(*) FROM sqlite_master"));
  auto version = check_rows(db, path, "PRAGMA user_version");
  if (!version) return version.error();
  const int v = std::stoi(version->at(0));
  if (v < 0) {
    return Error::bad_input(path + ": schema version " + std::to_string(v) +
                            " is not a kforge schema version (0 to " + std::to_string(kSchemaVersion) + ")");
  }
  if (v > kSchemaVersion) {
    return Error::bad_input(path + ": schema version " + std::to_string(v) +
                            " is newer than this kforge supports (" +
                            std::to_string(kSchemaVersion) + "); upgrade kforge");
  }
  if (v == 0 && objects.at(0) != "0") {
    return Error::bad_input(path + ": not a kforge database (it has tables but no schema version)");
  }
  return v;
}

/// Applies migrations past `from` up to `target`, each in its own transaction.
/// The version is re-read under the write lock: a concurrent opener may have
/// migrated first.
Status migrate(sqlite3* db, const std::string& path, int from, int target) {
  for (const schema::Migration& m : schema::migrations()) {
    if (m.to_version <= from) continue;
    if (m.to_version > target) break;
    KF_TRY_ASSIGN(tx, Transaction::begin(db, path));
    KF_TRY_ASSIGN(current, user_version(db, path));
    if (current >= m.to_version) continue;  // tx rolls back an empty transaction
    if (current != m.to_version - 1) {
      return Error::internal(path + ": cannot migrate schema version " + std::to_string(current) +
                             " to " + std::to_string(m.to_version));
    }
    if (Status st = exec(db, path, m.sql); !st.ok()) {
      // SQLITE_ERROR here is the SQL not fitting the tables (a column that
      // exists already, a table that does not): the stored version is wrong.
      if ((sqlite3_extended_errcode(db) & 0xff) != SQLITE_ERROR) return st.error();
      return Error::bad_input(path + ": schema version " + std::to_string(current) +
                              " does not describe its tables: migrating to " + std::to_string(m.to_version) +
                              " failed (" + st.error().message + ")");
    }
    KF_TRY_ASSIGN(after, user_version(db, path));
    if (after != m.to_version) {
      return Error::internal(path + ": migration to schema version " +
                             std::to_string(m.to_version) + " (" + m.summary +
                             ") left user_version at " + std::to_string(after));
    }
    KF_TRY(tx.commit());
  }
  return ok_status();
}

/// Switching to WAL upgrades the statement's read lock to a write lock, where
/// SQLite returns SQLITE_BUSY at once instead of calling the busy handler (a
/// concurrent first open of a new file): retry until the busy timeout.
Status enable_wal(sqlite3* db, const std::string& path) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (;;) {
    auto st = exec(db, path, "PRAGMA journal_mode = WAL");
    if (st.ok() || (sqlite3_errcode(db) & 0xff) != SQLITE_BUSY ||
        std::chrono::steady_clock::now() > deadline) {
      return st;
    }
    sqlite3_sleep(5);
  }
}

/// "file:PATH?immutable=1", with the characters URIs reserve escaped.
std::string immutable_uri(const std::string& path) {
  std::string uri = "file:";
  if (path.rfind("//", 0) == 0) uri += "//";  // an empty authority keeps a leading // in the path
  for (char c : path) {
    if (c == '%') uri += "%25";
    else if (c == '?') uri += "%3f";
    else if (c == '#') uri += "%23";
    else uri += c;
  }
  return uri + "?immutable=1";
}

/// Opens, validates (nothing is written before this passes), configures and,
/// when writable, migrates up to `target`.
Result<DbHandle> connect(const std::string& path, Database::Mode mode, int target) {
  namespace fs = std::filesystem;
  const bool read_only = mode != Database::Mode::kReadWrite;
  std::error_code ec;
  // SQLite takes "" for a temporary database that is gone at close: nothing stored.
  if (path.empty()) return Error::bad_input("database path is empty (give a file name)");
  if (read_only && !fs::exists(path, ec)) return Error::bad_input(path + ": no such database");
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec)) {
    return Error::bad_input(path + ": not a database file (" +
                            (fs::is_directory(path, ec) ? "a directory" : "not a regular file") + ")");
  }
  if (!read_only) {
    const fs::path dir = fs::path(path).parent_path();
    if (!dir.empty() && !fs::is_directory(dir, ec)) {
      return Error::bad_input(path + ": directory " + dir.string() + " does not exist");
    }
  }

  sqlite3* raw = nullptr;
  const bool immutable = mode == Database::Mode::kImmutable;
  const int flags = immutable   ? SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
                    : read_only ? SQLITE_OPEN_READONLY
                                : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  const std::string name = immutable ? immutable_uri(path) : path;
  const int rc = sqlite3_open_v2(name.c_str(), &raw, flags, nullptr);
  DbHandle db(raw);
  if (!raw) return Error{ErrorCode::kDatabase, path + ": " + sqlite3_errstr(rc), {}};
  if (rc != SQLITE_OK) return file_error(raw, path);
  sqlite3_busy_timeout(raw, kBusyTimeoutMs);
  KF_TRY(sql::register_functions(raw, path));

  // A read-only opener (the runtime) skips the full-file quick_check; the
  // header and schema checks still catch garbage and truncation.
  KF_TRY_ASSIGN(version, validate(raw, path, /*full_check=*/!read_only));
  KF_TRY(exec(raw, path, "PRAGMA foreign_keys = ON"));
  if (read_only) {
    if (version < kSchemaVersion) {
      return Error::bad_input(path + ": schema version " + std::to_string(version) +
                              " is older than " + std::to_string(kSchemaVersion) +
                              "; run `kforge db migrate`");
    }
    return db;
  }
  if (sqlite3_db_readonly(raw, "main") == 1) {
    return Error::bad_input(path + ": file is not writable; open it read-only");
  }
  KF_TRY(enable_wal(raw, path));
  KF_TRY(exec(raw, path, "PRAGMA synchronous = NORMAL"));
  KF_TRY(migrate(raw, path, version, target));
  return db;
}

Result<std::int64_t> select_id(Statement& st, const std::string& path) {
  KF_TRY_ASSIGN(row, st.step());
  if (!row) return Error::internal(path + ": row vanished after insert");
  return st.int64(0);
}

}  // namespace

Result<std::unique_ptr<Database>> Database::open(const std::string& path, Mode mode) {
  KF_TRY_ASSIGN(db, connect(path, mode, kSchemaVersion));
  return std::unique_ptr<Database>(new Database(db.release(), path));
}

Result<std::unique_ptr<Database>> Database::open_at_version(const std::string& path,
                                                            int version) {
  if (version < 0 || version > kSchemaVersion) {
    return Error::bad_input(path + ": no schema version " + std::to_string(version));
  }
  KF_TRY_ASSIGN(db, connect(path, Mode::kReadWrite, version));
  return std::unique_ptr<Database>(new Database(db.release(), path));
}

Database::~Database() { sqlite3_close_v2(db_); }

int Database::schema_version() const {
  auto v = user_version(db_, path_);
  return v ? *v : -1;
}

Result<std::int64_t> Database::put_device(const DeviceRecord& d) {
  if (d.key.empty()) return Error::bad_input(path_ + ": device key is empty");
  KF_TRY_ASSIGN(ins, Statement::prepare(db_, path_,
                                        "INSERT INTO devices (key, backend, vendor, name, arch, "
                                        "info_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) "
                                        "ON CONFLICT (key) DO NOTHING"));
  ins.bind_text(d.key).bind_text(d.backend).bind_text(d.vendor).bind_text(d.name);
  ins.bind_text(d.arch).bind_text(d.info_json).bind_text(utc_now());
  KF_TRY(ins.run());
  KF_TRY_ASSIGN(sel, Statement::prepare(db_, path_, "SELECT id FROM devices WHERE key = ?"));
  sel.bind_text(d.key);
  return select_id(sel, path_);
}

Result<std::int64_t> Database::put_template(const TemplateRecord& t) {
  if (t.name.empty() || t.hash.empty()) {
    return Error::bad_input(path_ + ": template name and hash must not be empty");
  }
  KF_TRY_ASSIGN(ins, Statement::prepare(db_, path_,
                                        "INSERT INTO templates (name, op, hash, manifest_json, "
                                        "created_at) VALUES (?, ?, ?, ?, ?) "
                                        "ON CONFLICT (name, hash) DO NOTHING"));
  ins.bind_text(t.name).bind_text(t.op).bind_text(t.hash).bind_text(t.manifest_json);
  ins.bind_text(utc_now());
  KF_TRY(ins.run());
  KF_TRY_ASSIGN(sel, Statement::prepare(db_, path_,
                                        "SELECT id FROM templates WHERE name = ? AND hash = ?"));
  sel.bind_text(t.name).bind_text(t.hash);
  return select_id(sel, path_);
}

Result<std::int64_t> Database::put_problem(const ProblemRecord& p) {
  if (p.key.empty()) return Error::bad_input(path_ + ": problem key is empty");
  KF_TRY_ASSIGN(ins, Statement::prepare(db_, path_,
                                        "INSERT INTO problems (key, op, dims_json, dtype, layout) "
                                        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING"));
  ins.bind_text(p.key).bind_text(p.op).bind_text(p.dims_json).bind_text(p.dtype);
  ins.bind_text(p.layout);
  KF_TRY(ins.run());
  KF_TRY_ASSIGN(sel, Statement::prepare(db_, path_, "SELECT id FROM problems WHERE key = ?"));
  sel.bind_text(p.key);
  return select_id(sel, path_);
}

Result<std::int64_t> Database::begin_sweep(const SweepRecord& s) {
  KF_TRY_ASSIGN(ins, Statement::prepare(db_, path_,
                                        "INSERT INTO sweeps (tool_version, git_revision, "
                                        "command_line, settings_json, device_json, host, "
                                        "started_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"));
  ins.bind_text(s.tool_version).bind_text(s.git_revision).bind_text(s.command_line);
  ins.bind_text(s.settings_json).bind_text(s.device_json).bind_text(s.host);
  ins.bind_text(s.started_at.empty() ? utc_now() : s.started_at);
  ins.bind_text_or_null(s.finished_at);
  KF_TRY(ins.run());
  return static_cast<std::int64_t>(sqlite3_last_insert_rowid(db_));
}

Status Database::finish_sweep(std::int64_t sweep_id, const std::string& finished_at) {
  KF_TRY_ASSIGN(st, Statement::prepare(db_, path_,
                                       "UPDATE sweeps SET finished_at = ? WHERE id = ?"));
  st.bind_text(finished_at.empty() ? utc_now() : finished_at).bind_int(sweep_id);
  KF_TRY(st.run());
  if (sqlite3_changes(db_) == 0) {
    return Error::not_found(path_ + ": no sweep " + std::to_string(sweep_id));
  }
  return ok_status();
}

Result<std::set<std::string>> Database::stored_configs(std::int64_t device_id,
                                                       std::int64_t template_id,
                                                       std::int64_t problem_id) {
  KF_TRY_ASSIGN(st, Statement::prepare(db_, path_,
                                       "SELECT config FROM results WHERE device_id = ? AND "
                                       "template_id = ? AND problem_id = ?"));
  st.bind_int(device_id).bind_int(template_id).bind_int(problem_id);
  std::set<std::string> configs;
  for (;;) {
    KF_TRY_ASSIGN(row, st.step());
    if (!row) return configs;
    configs.insert(st.text(0));
  }
}

Status Database::update_winner(std::int64_t device_id, std::int64_t template_id, std::int64_t problem_id,
                               const std::string& now) {
  // The fastest ok result of the triple (ties: the earliest) whose
  // configuration its template declares: a tampered row never wins.
  // updated_at moves only when the winner or its time changes.
  KF_TRY_ASSIGN(win, Statement::prepare(
                         db_, path_,
                         "INSERT INTO winners (device_id, problem_id, template_id, result_id, "
                         "config, median_ms, updated_at) SELECT r.device_id, r.problem_id, "
                         "r.template_id, r.id, r.config, r.median_ms, ? FROM results r JOIN templates t "
                         "ON t.id = r.template_id WHERE r.device_id = ? AND r.template_id = ? AND "
                         "r.problem_id = ? AND r.status = 'ok' AND r.median_ms IS NOT NULL AND "
                         "kforge_declared(t.manifest_json, r.config) ORDER BY r.median_ms, r.id LIMIT 1 "
                         "ON CONFLICT (device_id, problem_id, template_id) DO UPDATE SET "
                         "result_id = excluded.result_id, config = excluded.config, "
                         "median_ms = excluded.median_ms, updated_at = excluded.updated_at "
                         "WHERE result_id <> excluded.result_id OR median_ms <> excluded.median_ms"));
  win.bind_text(now).bind_int(device_id).bind_int(template_id).bind_int(problem_id);
  KF_TRY(win.run());
  // No declared result left: an undeclared winner goes rather than stays.
  KF_TRY_ASSIGN(drop, Statement::prepare(
                          db_, path_,
                          "DELETE FROM winners WHERE device_id = ? AND template_id = ? AND problem_id = ? "
                          "AND NOT EXISTS (SELECT 1 FROM results r JOIN templates t ON t.id = r.template_id "
                          "WHERE r.id = winners.result_id AND kforge_declared(t.manifest_json, r.config))"));
  drop.bind_int(device_id).bind_int(template_id).bind_int(problem_id);
  return drop.run();
}

Status Database::replace_timing(const ResultRecord& r) {
  const std::string now = utc_now();
  KF_TRY_ASSIGN(tx, Transaction::begin(db_, path_));
  // The re-timing's clock record (r.resources_json's "clocks") replaces the
  // stored one; without one, stored clocks describe samples no longer stored.
  const auto parsed = parse_json_bounded(r.resources_json.empty() ? "{}" : r.resources_json, "resources_json");
  const nlohmann::json given = parsed.ok() ? parsed.value() : nlohmann::json();
  const bool clocks = given.is_object() && given.contains("clocks") && !given["clocks"].is_null();
  const std::string set_clocks =
      clocks ? "resources_json = json_set(CASE WHEN json_valid(resources_json) THEN resources_json ELSE '{}' END, "
               "'$.clocks', json(?)) "
             : "resources_json = CASE WHEN json_valid(resources_json) AND json_type(resources_json, '$.clocks') "
               "IS NOT NULL THEN json_remove(resources_json, '$.clocks') ELSE resources_json END ";
  KF_TRY_ASSIGN(up, Statement::prepare(db_, path_,
                                       "UPDATE results SET median_ms = ?, p20_ms = ?, p80_ms = ?, min_ms = ?, "
                                       "max_ms = ?, count = ?, samples_json = ?, reason = ?, " + set_clocks +
                                       "WHERE device_id = ? "
                                       "AND template_id = ? AND problem_id = ? AND config = ? AND status = 'ok'"));
  up.bind_real(r.median_ms).bind_real(r.p20_ms).bind_real(r.p80_ms).bind_real(r.min_ms).bind_real(r.max_ms);
  up.bind_int(r.count).bind_text(r.samples_json).bind_text(r.reason);
  if (clocks) up.bind_text(given["clocks"].dump());
  up.bind_int(r.device_id).bind_int(r.template_id).bind_int(r.problem_id).bind_text(r.config);
  KF_TRY(up.run());
  if (sqlite3_changes(db_) == 0) {
    return Error::not_found(path_ + ": no ok result of configuration '" + r.config + "' to re-time");
  }
  KF_TRY(update_winner(r.device_id, r.template_id, r.problem_id, now));
  return tx.commit();
}

Status Database::refresh_winner(std::int64_t device_id, std::int64_t template_id, std::int64_t problem_id) {
  KF_TRY_ASSIGN(tx, Transaction::begin(db_, path_));
  KF_TRY(update_winner(device_id, template_id, problem_id, utc_now()));
  return tx.commit();
}

Result<bool> Database::add_result(const ResultRecord& r) { return put_result(r, false); }

Status Database::replace_result(const ResultRecord& r) {
  KF_TRY(put_result(r, true));
  return ok_status();
}

Result<bool> Database::put_result(const ResultRecord& r, bool replace) {
  static constexpr const char* kKeep = "DO NOTHING";
  static constexpr const char* kReplace =
      "DO UPDATE SET sweep_id = excluded.sweep_id, status = excluded.status, reason = excluded.reason, "
      "median_ms = excluded.median_ms, p20_ms = excluded.p20_ms, p80_ms = excluded.p80_ms, "
      "min_ms = excluded.min_ms, max_ms = excluded.max_ms, count = excluded.count, "
      "samples_json = excluded.samples_json, error_norm = excluded.error_norm, "
      "error_ratio = excluded.error_ratio, compile_ms = excluded.compile_ms, "
      "resources_json = excluded.resources_json, compile_log = excluded.compile_log, "
      "created_at = excluded.created_at";
  const std::string now = utc_now();
  KF_TRY_ASSIGN(tx, Transaction::begin(db_, path_));
  KF_TRY_ASSIGN(ins, Statement::prepare(
                         db_, path_,
                         std::string("INSERT INTO results (sweep_id, device_id, template_id, problem_id, "
                                     "config, status, reason, median_ms, p20_ms, p80_ms, min_ms, max_ms, "
                                     "count, samples_json, error_norm, error_ratio, compile_ms, "
                                     "resources_json, compile_log, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, "
                                     "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (device_id, "
                                     "template_id, problem_id, config) ") +
                             (replace ? kReplace : kKeep)));
  ins.bind_id_or_null(r.sweep_id).bind_int(r.device_id).bind_int(r.template_id);
  ins.bind_int(r.problem_id).bind_text(r.config).bind_text(r.status).bind_text(r.reason);
  ins.bind_real(r.median_ms).bind_real(r.p20_ms).bind_real(r.p80_ms).bind_real(r.min_ms);
  ins.bind_real(r.max_ms).bind_int(r.count).bind_text(r.samples_json).bind_real(r.error_norm);
  ins.bind_real(r.error_ratio).bind_real(r.compile_ms).bind_text(r.resources_json);
  ins.bind_text(r.compile_log).bind_text(r.created_at.empty() ? now : r.created_at);
  KF_TRY(ins.run());
  const bool inserted = sqlite3_changes(db_) > 0;
  // A replaced row may have been the winner, or may become it.
  if (replace || (inserted && r.status == "ok")) {
    KF_TRY(update_winner(r.device_id, r.template_id, r.problem_id, now));
  }
  KF_TRY(tx.commit());
  return inserted;
}

Result<std::vector<ResultRecord>> Database::results(const ResultFilter& f) {
  std::string sql =
      "SELECT r.id, r.sweep_id, r.device_id, r.template_id, r.problem_id, r.config, r.status, "
      "r.reason, r.median_ms, r.p20_ms, r.p80_ms, r.min_ms, r.max_ms, r.count, r.samples_json, "
      "r.error_norm, r.error_ratio, r.compile_ms, r.resources_json, r.compile_log, r.created_at, "
      "t.name, t.hash, p.key, d.key FROM results r JOIN templates t ON t.id = r.template_id "
      "JOIN problems p ON p.id = r.problem_id JOIN devices d ON d.id = r.device_id WHERE 1";
  if (f.device_key) sql += " AND d.key = ?";
  if (f.problem_key) sql += " AND p.key = ?";
  if (f.template_name) sql += " AND t.name = ?";
  sql += " ORDER BY r.id";
  KF_TRY_ASSIGN(st, Statement::prepare(db_, path_, sql));
  if (f.device_key) st.bind_text(*f.device_key);
  if (f.problem_key) st.bind_text(*f.problem_key);
  if (f.template_name) st.bind_text(*f.template_name);

  std::vector<ResultRecord> out;
  for (;;) {
    KF_TRY_ASSIGN(row, st.step());
    if (!row) return out;
    ResultRecord& r = out.emplace_back();
    int c = 0;
    r.id = st.int64(c++);
    r.sweep_id = st.int64(c++);
    r.device_id = st.int64(c++);
    r.template_id = st.int64(c++);
    r.problem_id = st.int64(c++);
    r.config = st.text(c++);
    r.status = st.text(c++);
    r.reason = st.text(c++);
    r.median_ms = st.real(c++);
    r.p20_ms = st.real(c++);
    r.p80_ms = st.real(c++);
    r.min_ms = st.real(c++);
    r.max_ms = st.real(c++);
    r.count = st.int64(c++);
    r.samples_json = st.text(c++);
    r.error_norm = st.real(c++);
    r.error_ratio = st.real(c++);
    r.compile_ms = st.real(c++);
    r.resources_json = st.text(c++);
    r.compile_log = st.text(c++);
    r.created_at = st.text(c++);
    r.template_name = st.text(c++);
    r.template_hash = st.text(c++);
    r.problem_key = st.text(c++);
    r.device_key = st.text(c++);
  }
}

Result<std::vector<WinnerRecord>> Database::winners(const WinnerFilter& f) {
  std::string sql =
      "SELECT d.key, p.key, p.op, p.dims_json, p.dtype, p.layout, t.name, t.hash, w.config, "
      "w.median_ms, w.result_id, CASE WHEN json_valid(r.resources_json) THEN "
      "json_extract(r.resources_json, '$.library_call') END, "
      // A winners row is input too: it must agree with the result it names.
      "CASE WHEN r.id IS NULL THEN 'its result row ' || w.result_id || ' does not exist' "
      "WHEN r.status <> 'ok' THEN 'its result row ' || r.id || ' has status ' || r.status "
      "WHEN r.config <> w.config THEN 'its result row ' || r.id || ' is for configuration ' || r.config "
      "WHEN r.template_id <> w.template_id OR r.problem_id <> w.problem_id OR r.device_id <> w.device_id "
      "THEN 'its result row ' || r.id || ' is for another template, problem or device' "
      "WHEN r.median_ms IS NOT w.median_ms THEN 'its median ' || w.median_ms || ' ms differs from its result "
      "row ' || r.id || ' (' || ifnull(r.median_ms, 'NULL') || ')' ELSE '' END, "
      "CASE WHEN json_valid(s.settings_json) THEN json_extract(s.settings_json, '$.online') END, "
      // Cut short: its run never finished, and no later run of the problem did.
      "s.id IS NOT NULL AND s.finished_at IS NULL AND NOT EXISTS (SELECT 1 FROM sweeps f WHERE f.id > s.id "
      "AND f.finished_at IS NOT NULL AND json_valid(f.settings_json) AND "
      "json_extract(f.settings_json, '$.problem') = p.key) "
      "FROM winners w JOIN devices d ON d.id = w.device_id "
      "JOIN problems p ON p.id = w.problem_id JOIN templates t ON t.id = w.template_id "
      "LEFT JOIN results r ON r.id = w.result_id LEFT JOIN sweeps s ON s.id = r.sweep_id WHERE 1";
  if (f.device_key) sql += " AND d.key = ?";
  if (f.op) sql += " AND p.op = ?";
  if (f.dtype) sql += " AND p.dtype = ?";
  if (f.layout) sql += " AND p.layout = ?";
  if (f.problem_key) sql += " AND p.key = ?";
  sql += " ORDER BY w.median_ms, w.result_id";
  KF_TRY_ASSIGN(st, Statement::prepare(db_, path_, sql));
  for (const auto* v : {&f.device_key, &f.op, &f.dtype, &f.layout, &f.problem_key}) {
    if (*v) st.bind_text(**v);
  }

  std::vector<WinnerRecord> out;
  for (;;) {
    KF_TRY_ASSIGN(row, st.step());
    if (!row) return out;
    WinnerRecord& w = out.emplace_back();
    int c = 0;
    w.device_key = st.text(c++);
    w.problem_key = st.text(c++);
    w.op = st.text(c++);
    w.dims_json = st.text(c++);
    w.dtype = st.text(c++);
    w.layout = st.text(c++);
    w.template_name = st.text(c++);
    w.template_hash = st.text(c++);
    w.config = st.text(c++);
    w.median_ms = st.real(c++);
    w.result_id = st.int64(c++);
    w.library_call = st.text(c++);
    w.disagreement = st.text(c++);
    w.online = st.text(c++);
    w.sweep_unfinished = st.int64(c++) != 0;
  }
}

Result<std::vector<DeviceRecord>> Database::devices() {
  KF_TRY_ASSIGN(st, Statement::prepare(db_, path_,
                                       "SELECT id, key, backend, vendor, name, arch, info_json "
                                       "FROM devices ORDER BY id"));
  std::vector<DeviceRecord> out;
  for (;;) {
    KF_TRY_ASSIGN(row, st.step());
    if (!row) return out;
    DeviceRecord& d = out.emplace_back();
    d.id = st.int64(0);
    d.key = st.text(1);
    d.backend = st.text(2);
    d.vendor = st.text(3);
    d.name = st.text(4);
    d.arch = st.text(5);
    d.info_json = st.text(6);
  }
}

Result<std::vector<TemplateRecord>> Database::templates() {
  KF_TRY_ASSIGN(st, Statement::prepare(db_, path_,
                                       "SELECT id, name, op, hash, manifest_json FROM templates "
                                       "ORDER BY id"));
  std::vector<TemplateRecord> out;
  for (;;) {
    KF_TRY_ASSIGN(row, st.step());
    if (!row) return out;
    TemplateRecord& t = out.emplace_back();
    t.id = st.int64(0);
    t.name = st.text(1);
    t.op = st.text(2);
    t.hash = st.text(3);
    t.manifest_json = st.text(4);
  }
}

Result<std::vector<ProblemRecord>> Database::problems() {
  KF_TRY_ASSIGN(st, Statement::prepare(db_, path_,
                                       "SELECT id, key, op, dims_json, dtype, layout FROM problems "
                                       "ORDER BY id"));
  std::vector<ProblemRecord> out;
  for (;;) {
    KF_TRY_ASSIGN(row, st.step());
    if (!row) return out;
    ProblemRecord& p = out.emplace_back();
    p.id = st.int64(0);
    p.key = st.text(1);
    p.op = st.text(2);
    p.dims_json = st.text(3);
    p.dtype = st.text(4);
    p.layout = st.text(5);
  }
}

Result<std::vector<SweepRecord>> Database::sweeps() {
  KF_TRY_ASSIGN(st, Statement::prepare(db_, path_,
                                       "SELECT id, tool_version, git_revision, command_line, "
                                       "settings_json, device_json, host, started_at, finished_at "
                                       "FROM sweeps ORDER BY id"));
  std::vector<SweepRecord> out;
  for (;;) {
    KF_TRY_ASSIGN(row, st.step());
    if (!row) return out;
    SweepRecord& s = out.emplace_back();
    s.id = st.int64(0);
    s.tool_version = st.text(1);
    s.git_revision = st.text(2);
    s.command_line = st.text(3);
    s.settings_json = st.text(4);
    s.device_json = st.text(5);
    s.host = st.text(6);
    s.started_at = st.text(7);
    s.finished_at = st.text(8);
  }
}

}  // namespace kforge
