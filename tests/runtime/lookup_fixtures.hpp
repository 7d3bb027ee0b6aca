// Shared pieces of the lookup tests: problems, catalogs, a tuned database
// (tuned once per test process, copied per test), raw SQL to plant entries,
// and a launch that checks the answer.
#pragma once

#include <catch2/catch.hpp>
#include <sqlite3.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "generator/gemm_operator.hpp"
#include "runtime/device/device_registry.hpp"
#include "runtime/lookup/lookup.hpp"
#include "templates/builtin_templates.hpp"
#include "tests/planted_template.hpp"
#include "tests/test_util.hpp"
#include "tuner/tuner.hpp"

namespace kforge::test {


inline Problem gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
  return Problem{"gemm", {{"M", m}, {"N", n}, {"K", k}, {"batch", 1}}, Dtype::kF32, Layout{}, {}, {}};
}

inline TemplateCatalog catalog_with(const std::vector<std::string>& dirs = {kPlanted}) {
  auto c = TemplateCatalog::builtin();
  REQUIRE(c.ok());
  for (const auto& d : dirs) {
    auto added = c->add_dir(d);
    INFO((added.ok() ? "" : added.error().message));
    REQUIRE(added.ok());
  }
  return std::move(*c);
}


/// Tunes every configuration of template `name` for `p` into `db_path`.
inline void tune_into(const std::string& db_path, Device& device, const TemplateCatalog& catalog,
                      const std::string& name, const Problem& p) {
  auto db = Database::open(db_path, Database::Mode::kReadWrite);
  REQUIRE(db.ok());
  GemmOperator op;
  Tuner tuner(device, **db, op);
  TuneRequest req;
  req.problem = p;
  req.templates = {catalog.find(name)};
  REQUIRE(req.templates[0] != nullptr);
  req.strategy = "exhaustive";
  req.protocol.warmup = 0;
  req.protocol.min_reps = req.protocol.max_reps = 2;
  auto run = tuner.run(req);
  INFO((run.ok() ? "" : run.error().message));
  REQUIRE(run.ok());
}

/// A database with the planted template tuned on gemm(33, 17, 9) on
/// `device`, copied to `dir`/`name`. The tuning runs once per process.
inline std::string tuned_copy(Device& device, const TempDir& dir, const std::string& name = "k.db") {
  static TempDir golden_dir;
  static const std::string golden = [&] {
    const std::string path = golden_dir.file("golden.db");
    tune_into(path, device, catalog_with(), "gemm_naive_planted", gemm(33, 17, 9));
    return path;
  }();
  const std::string path = dir.file(name);
  std::filesystem::copy_file(golden, path);
  return path;
}

inline void exec_sql(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(db_path.c_str(), &db) == SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  const std::string msg = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  INFO(msg);
  REQUIRE(rc == SQLITE_OK);
}

/// Adds a device row like the tuned one (id 1) but with another key and name
/// and the given vendor and arch; returns nothing (refer to it by key).
inline void plant_device(const std::string& db_path, const std::string& key, const std::string& name,
                         const std::string& vendor_sql, const std::string& arch_sql) {
  exec_sql(db_path, "INSERT INTO devices (key, backend, vendor, name, arch, info_json, created_at) "
                    "SELECT '" + key + "', backend, " + vendor_sql + ", '" + name + "', " + arch_sql +
                    ", '', created_at FROM devices WHERE id = 1");
}

/// Gives every winner of the tuned device (id 1), and the results they name,
/// to the device `key` instead.
inline void move_winners(const std::string& db_path, const std::string& key) {
  const std::string to = "(SELECT id FROM devices WHERE key = '" + key + "')";
  exec_sql(db_path, "UPDATE results SET device_id = " + to + " WHERE id IN (SELECT result_id FROM winners WHERE "
                    "device_id = 1); UPDATE winners SET device_id = " + to + " WHERE device_id = 1");
}

/// Plants, for every winner of device `from_sql` (SQL for its id), a result
/// row and a winner naming it on device `to_sql` for problem `problem_sql`
/// with configuration `config_sql` (SQL over the winner `w`): an entry that
/// agrees with its result row, as a tuned one does.
inline void plant_winners(const std::string& db_path, const std::string& from_sql, const std::string& to_sql,
                          const std::string& problem_sql, const std::string& config_sql) {
  exec_sql(db_path,
           "CREATE TEMP TABLE planted_after AS SELECT ifnull(max(id), 0) AS id FROM results; "
           "INSERT INTO results (sweep_id, device_id, template_id, problem_id, config, status, median_ms, count, "
           "created_at) SELECT r.sweep_id, " + to_sql + ", w.template_id, " + problem_sql + ", " + config_sql +
               ", 'ok', w.median_ms, r.count, r.created_at FROM winners w JOIN results r ON r.id = w.result_id "
               "WHERE w.device_id = " + from_sql + "; "
           "INSERT INTO winners (device_id, problem_id, template_id, result_id, config, median_ms, updated_at) "
           "SELECT device_id, problem_id, template_id, id, config, median_ms, created_at FROM results "
           "WHERE id > (SELECT id FROM planted_after)");
}

/// Copies every winner of device `from_key` (the tuned device, id 1, when
/// empty) to device `to_key`, with `config`.
inline void copy_winners(const std::string& db_path, const std::string& to_key,
                         const std::string& config, const std::string& from_key = "") {
  const std::string from =
      from_key.empty() ? std::string("1") : "(SELECT id FROM devices WHERE key = '" + from_key + "')";
  plant_winners(db_path, from, "(SELECT id FROM devices WHERE key = '" + to_key + "')", "w.problem_id",
                "'" + config + "'");
}

/// Points every winner at the result row of `config` (the tuned device's,
/// for the winner's problem), as if that configuration had been the fastest.
inline void point_winners_at(const std::string& db_path, const std::string& config) {
  const std::string row = "FROM results r WHERE r.config = '" + config + "' AND r.device_id = winners.device_id "
                          "AND r.template_id = winners.template_id AND r.problem_id = winners.problem_id";
  exec_sql(db_path, "UPDATE winners SET config = '" + config + "', result_id = (SELECT r.id " + row +
                        "), median_ms = (SELECT r.median_ms " + row + ")");
}

/// Moves every result and winner to the problem `key` (inserted beforehand).
inline void move_to_problem(const std::string& db_path, const std::string& key) {
  const std::string to = "(SELECT id FROM problems WHERE key = '" + key + "')";
  exec_sql(db_path, "UPDATE results SET problem_id = " + to + "; UPDATE winners SET problem_id = " + to);
}

/// The binary cache of this test process: tests never read or fill the user's.
inline const std::string& test_binary_cache() {
  static TempDir dir;
  static const std::string path = dir.file("binaries");
  return path;
}

/// Collects warnings instead of printing them.
struct Warnings {
  std::vector<std::string> seen;
  LookupOptions options(const std::string& user_db, const std::string& system_db = "") {
    LookupOptions o;
    o.user_db = user_db;
    o.system_db = system_db;
    o.binary_cache_dir = test_binary_cache();
    o.on_warning = [this](const std::string& m) { seen.push_back(m); };
    return o;
  }
  std::size_t count(const std::string& part) const {
    std::size_t n = 0;
    for (const auto& s : seen) n += s.find(part) != std::string::npos;
    return n;
  }
};

inline std::unique_ptr<Lookup> open_lookup(const LookupOptions& o, Device& device,
                                           TemplateCatalog catalog) {
  auto lookup = Lookup::open(o, device, std::move(catalog));
  INFO((lookup.ok() ? "" : lookup.error().message));
  REQUIRE(lookup.ok());
  return std::move(*lookup);
}

inline Selection select_ok(Lookup& lookup, const Problem& p) {
  auto sel = lookup.select(p);
  INFO((sel.ok() ? "" : sel.error().message + "\n" + sel.error().context));
  REQUIRE(sel.ok());
  return *sel;
}

/// Launches the selection on fresh data and checks it against the reference.
inline void check_launch(Lookup& lookup, Device& device, const Selection& sel) {
  GemmOperator op;
  Workload w = op.make_workload(sel.problem, 7, WorkloadKind::kAccumulate);
  Reference ref = op.reference(sel.problem, w);
  std::vector<std::unique_ptr<Buffer>> bufs;
  std::vector<KernelArg> args;
  for (const auto& t : w.tensors) {
    bufs.push_back(std::move(device.allocate(t.bytes.size()).value()));
    REQUIRE(device.write(*bufs.back(), t.bytes.data(), t.bytes.size()).ok());
  }
  for (const auto& a : w.args) {
    if (a.kind == OperatorArg::Kind::kTensor) args.push_back(KernelArg::of(*bufs[a.tensor]));
    else if (a.kind == OperatorArg::Kind::kInt32) args.push_back(KernelArg::of(a.i32));
    else args.push_back(KernelArg::of(a.f32));
  }
  auto launched = lookup.launch(sel, args);
  INFO((launched.ok() ? "" : launched.error().message));
  REQUIRE(launched.ok());
  std::vector<float> c(w.tensors[w.output].elements());
  REQUIRE(device.read(*bufs[w.output], c.data(), c.size() * 4).ok());
  for (std::size_t i = 0; i < c.size(); ++i) {
    INFO(sel.template_name << " " << sel.config << " index " << i);
    REQUIRE(std::fabs(c[i] - ref.value[i]) <= ref.tolerance * ref.scale[i]);
  }
}

}  // namespace kforge::test
