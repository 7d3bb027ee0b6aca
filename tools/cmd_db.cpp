// `kforge db verify|merge|migrate`: the tuning database's lifecycle. Other
// `db` subcommands attach to the same group through db_command().
#include <filesystem>
#include <iostream>
#include <map>
#include <unistd.h>

#include "db/database.hpp"
#include "runtime/catalog/entry_check.hpp"
#include "tools/commands.hpp"

namespace kforge::cli {

namespace {

/// Stale, invalid and unknown-template winners: what a database holds that
/// the runtime would skip (with the same EntryChecker rules).
struct EntryAudit {
  std::int64_t total = 0, usable = 0;
  std::map<EntryVerdict, std::int64_t> by_verdict;
  struct Stale {
    std::string template_name, hash, current;
    std::int64_t winners = 0;
  };
  std::map<std::string, Stale> stale;  ///< by template + hash
  std::vector<nlohmann::json> invalid;  ///< and unknown templates
};

EntryAudit audit(Database& db, const TemplateCatalog& catalog) {
  EntryAudit a;
  std::map<std::string, std::string> backend_of;  // device key -> backend
  for (const auto& d : unwrap(db.devices())) backend_of[d.key] = d.backend;
  std::map<std::string, std::unique_ptr<EntryChecker>> checkers;  // by backend
  for (const auto& w : unwrap(db.winners())) {
    ++a.total;
    const std::string& backend = backend_of[w.device_key];
    auto& checker = checkers[backend];
    if (!checker) {
      DeviceInfo info;
      info.backend = backend;
      checker = std::make_unique<EntryChecker>(catalog, info);
    }
    const EntryCheck c = checker->check_stored(w.template_name, w.template_hash, w.config);
    if (c.usable()) {
      ++a.usable;
      continue;
    }
    ++a.by_verdict[c.verdict];
    if (c.verdict == EntryVerdict::kStale) {
      auto& s = a.stale[w.template_name + " " + w.template_hash];
      s.template_name = w.template_name;
      s.hash = w.template_hash;
      s.current = checker->current_hash(w.template_name);
      ++s.winners;
    } else {
      a.invalid.push_back({{"template", w.template_name}, {"config", w.config},
                           {"verdict", verdict_name(c.verdict)}, {"device_key", w.device_key},
                           {"problem", w.problem_key}, {"reason", c.reason}});
    }
  }
  return a;
}

void run_verify(const CommonOptions& o) {
  auto db = unwrap(Database::open(o.db, Database::Mode::kReadOnly));
  const auto report = unwrap(db->verify());
  const EntryAudit a = audit(*db, make_catalog(o));
  const auto count = [&](EntryVerdict v) {
    auto it = a.by_verdict.find(v);
    return it == a.by_verdict.end() ? std::int64_t{0} : it->second;
  };
  const std::int64_t invalid = count(EntryVerdict::kInvalid);
  const bool healthy = report.findings.empty() && invalid == 0;
  if (o.json) {
    nlohmann::json stale = nlohmann::json::array();
    for (const auto& [_, s] : a.stale) {
      stale.push_back({{"template", s.template_name}, {"hash", s.hash}, {"current_hash", s.current},
                       {"winners", s.winners}});
    }
    print_json({{"database", o.db},
                {"database_schema_version", report.schema_version},
                {"supported_schema_version", kSchemaVersion},
                {"healthy", healthy},
                {"counts",
                 {{"devices", report.devices}, {"templates", report.templates},
                  {"problems", report.problems}, {"sweeps", report.sweeps},
                  {"unfinished_sweeps", report.unfinished_sweeps}, {"results", report.results},
                  {"winners", report.winners}, {"counters", report.counters}}},
                {"findings", report.findings},
                {"entries",
                 {{"total", a.total}, {"usable", a.usable}, {"stale", count(EntryVerdict::kStale)},
                  {"invalid", invalid}, {"unknown_template", count(EntryVerdict::kUnknownTemplate)}}},
                {"stale", stale},
                {"invalid", a.invalid}});
  } else {
    std::cout << o.db << ": schema version " << report.schema_version << " (this kforge: "
              << kSchemaVersion << ")\n"
              << "  " << report.devices << " devices, " << report.templates
              << " template versions, " << report.problems << " problems, " << report.sweeps
              << " sweeps (" << report.unfinished_sweeps << " unfinished), " << report.results
              << " results, " << report.winners << " winners, " << report.counters << " counter rows\n";
    std::cout << "integrity: " << (report.findings.empty() ? "ok" : "FAILED") << "\n";
    for (const auto& f : report.findings) std::cout << "  " << f << "\n";
    std::cout << "winners: " << a.usable << " usable, " << count(EntryVerdict::kStale) << " stale, "
              << invalid << " invalid, " << count(EntryVerdict::kUnknownTemplate)
              << " of templates unknown here\n";
    for (const auto& [_, s] : a.stale) {
      std::cout << "  stale: " << s.template_name << " hash " << s.hash << " (current "
                << (s.current.empty() ? "none" : s.current) << "): " << s.winners
                << " winners, never selected; retune to refresh\n";
    }
    for (const auto& j : a.invalid) {
      std::cout << "  " << j["verdict"].get<std::string>() << ": " << j["reason"].get<std::string>()
                << " (problem " << j["problem"].get<std::string>() << ")\n";
    }
    std::cout << (healthy ? "verdict: healthy\n" : "verdict: problems found\n");
  }
  if (!healthy) throw ErrorException(Error{ErrorCode::kInternal, o.db + ": verify found problems", {}});
}

nlohmann::json merge_json(const std::string& input, const Database::MergeReport& r) {
  return {{"input", input},         {"devices", r.devices},
          {"templates", r.templates}, {"problems", r.problems},
          {"sweeps", r.sweeps},     {"results", r.results},
          {"duplicate_results", r.duplicate_results}, {"winners_changed", r.winners_changed},
          {"counters", r.counters}};
}

void run_merge(const CommonOptions& o, const std::vector<std::string>& inputs, const std::string& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& in : inputs) {
    if (!fs::exists(in, ec)) throw ErrorException(Error::bad_input(in + ": no such database"));
  }
  // A new output is built beside its final name and renamed at the end, so
  // a failed merge leaves nothing half-made; an existing one takes each
  // input in its own transaction.
  const bool fresh = !fs::exists(out, ec);
  const std::string target = fresh ? out + ".partial-" + std::to_string(getpid()) : out;
  nlohmann::json reports = nlohmann::json::array();
  try {
    auto db = unwrap(Database::open(target, Database::Mode::kReadWrite));
    for (const auto& in : inputs) {
      if (!fresh && fs::equivalent(in, out, ec)) continue;  // already there
      const auto r = unwrap(db->merge_from(in));
      reports.push_back(merge_json(in, r));
      if (!o.json) {
        std::cout << in << ": +" << r.devices << " devices, +" << r.templates
                  << " template versions, +" << r.problems << " problems, +" << r.sweeps
                  << " sweeps, +" << r.results << " results (" << r.duplicate_results
                  << " already present), " << r.winners_changed << " winners changed, +" << r.counters
                  << " counter rows\n";
      }
    }
  } catch (...) {
    if (fresh) {
      for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(target + suffix, ec);
    }
    throw;
  }
  if (fresh) fs::rename(target, out);
  if (o.json) print_json({{"output", out}, {"created", fresh}, {"inputs", reports}});
  else std::cout << "merged into " << out << (fresh ? " (new)" : "") << "\n";
}

void run_migrate(const CommonOptions& o) {
  const auto r = unwrap(Database::migrate(o.db));
  if (o.json) {
    print_json({{"database", o.db}, {"from", r.from}, {"to", r.to}, {"migrated", r.from != r.to}});
  } else if (r.from == r.to) {
    std::cout << o.db << ": schema version " << r.to << ", up to date\n";
  } else {
    std::cout << o.db << ": migrated schema version " << r.from << " to " << r.to << "\n";
  }
}

}  // namespace

CLI::App& db_command(CLI::App& app) {
  auto existing = app.get_subcommands([](CLI::App* a) { return a->get_name() == "db"; });
  if (!existing.empty()) return *existing.front();
  auto* db = app.add_subcommand("db", "Tuning database lifecycle: verify, merge, migrate, ...");
  db->require_subcommand(1);
  return *db;
}

void add_db_command(CLI::App& app, CommonOptions& o) {
  CLI::App& db = db_command(app);

  auto* verify = db.add_subcommand(
      "verify", "Check a database: integrity, schema version, stale and invalid winners (read-only)");
  add_db_flag(*verify, o);
  add_template_flag(*verify, o);
  add_json_flag(*verify, o);
  verify->callback([&o] { run_verify(o); });

  static std::vector<std::string> inputs;
  static std::string out;
  auto* merge = db.add_subcommand("merge", "Merge databases (e.g. sweep shards) into one, losing nothing");
  merge->add_option("inputs", inputs, "Databases to merge, in order")->required()->check(non_empty_path());
  merge->add_option("-o,--output", out, "The merged database (created, or added to)")
      ->required()
      ->check(non_empty_path());
  add_json_flag(*merge, o);
  merge->callback([&o] { run_merge(o, inputs, out); });

  auto* migrate = db.add_subcommand("migrate", "Upgrade a database to this kforge's schema version");
  add_db_flag(*migrate, o);
  add_json_flag(*migrate, o);
  migrate->callback([&o] { run_migrate(o); });
}

}  // namespace kforge::cli
