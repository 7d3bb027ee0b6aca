// Reading tuning sets from databases and JSON exports, and writing them into databases.
#include "db/tuning_set.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "core/printable.hpp"
#include "db/device_match.hpp"
#include "db/json_interchange.hpp"

namespace kforge {

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool same_sweep(const SweepRecord& a, const SweepRecord& b) {
  return std::tie(a.tool_version, a.git_revision, a.command_line, a.settings_json, a.device_json, a.host,
                  a.started_at, a.finished_at) == std::tie(b.tool_version, b.git_revision, b.command_line,
                                                           b.settings_json, b.device_json, b.host,
                                                           b.started_at, b.finished_at);
}

void sort_winners(std::vector<WinnerRecord>& w) {
  std::stable_sort(w.begin(), w.end(), [](const WinnerRecord& a, const WinnerRecord& b) {
    return std::tie(a.device_key, a.problem_key, a.median_ms, a.template_name, a.template_hash) <
           std::tie(b.device_key, b.problem_key, b.median_ms, b.template_name, b.template_hash);
  });
}

/// Writes one source result's counter rows beside the stored result
/// matching `stored`, collector by collector, keeping a collector's rows the
/// stored result already has.
Status import_counters(Database& db, const std::vector<CounterRecord>& rows_of_result, const ResultRecord& stored,
                       ImportCounts& counts) {
  if (rows_of_result.empty()) return ok_status();
  std::map<std::string, std::vector<CounterRecord>> by_collector;
  for (const auto& c : rows_of_result) by_collector[c.collector].push_back(c);
  KF_TRY_ASSIGN(id, db.result_id(stored.device_id, stored.template_id, stored.problem_id, stored.config));
  if (!id) return Error::not_found(db.path() + ": result " + stored.config + " vanished during import");
  KF_TRY_ASSIGN(present, db.counters({*id}));
  for (auto& [collector, rows] : by_collector) {
    const bool has = std::any_of(present.begin(), present.end(),
                                 [&](const CounterRecord& p) { return p.collector == collector; });
    if (has) {
      counts.counters_present += static_cast<std::int64_t>(rows.size());
      continue;
    }
    KF_TRY(db.replace_counters(*id, collector, rows));
    counts.counters_added += static_cast<std::int64_t>(rows.size());
  }
  return ok_status();
}

}  // namespace

bool TuningFilter::matches(const DeviceRecord& d) const {
  return !device || device_matches(*device, d);
}

bool TuningFilter::matches(const ProblemRecord& p) const {
  if (op && p.op != *op) return false;
  if (dtype && p.dtype != *dtype) return false;
  if (layout && lower(p.layout) != lower(*layout)) return false;
  if (problem_key && p.key != *problem_key) return false;
  return true;
}

const DeviceRecord* TuningSet::device(const std::string& key) const {
  for (const auto& d : devices)
    if (d.key == key) return &d;
  return nullptr;
}

const ProblemRecord* TuningSet::problem(const std::string& key) const {
  for (const auto& p : problems)
    if (p.key == key) return &p;
  return nullptr;
}

const TemplateRecord* TuningSet::find_template(const std::string& name, const std::string& hash) const {
  for (const auto& t : templates)
    if (t.name == name && t.hash == hash) return &t;
  return nullptr;
}

const ResultRecord* TuningSet::result(std::int64_t id) const {
  auto it = std::lower_bound(results.begin(), results.end(), id,
                             [](const ResultRecord& r, std::int64_t v) { return r.id < v; });
  return it != results.end() && it->id == id ? &*it : nullptr;
}

const SweepRecord* TuningSet::sweep(std::int64_t id) const {
  for (const auto& s : sweeps)
    if (s.id == id) return &s;
  return nullptr;
}

std::vector<CounterRecord> TuningSet::counters_of(std::int64_t result_id) const {
  auto [first, last] = std::equal_range(counters.begin(), counters.end(), result_id, ByResult{});
  return {first, last};
}

std::vector<const ResultRecord*> TuningSet::results_of(const std::string& device_key,
                                                       const std::string& problem_key) const {
  std::vector<const ResultRecord*> out;
  for (const auto& r : results)
    if (r.device_key == device_key && r.problem_key == problem_key) out.push_back(&r);
  return out;
}

TuningSet filter_tuning_set(TuningSet in, const TuningFilter& filter) {
  TuningSet set;
  set.source = std::move(in.source);
  set.source_schema_version = in.source_schema_version;
  set.filter = filter;
  // A set that holds only winners' results cannot give every result back.
  set.filter.all_results = filter.all_results && in.filter.all_results;

  std::set<std::string> device_ok, problem_ok;
  for (const auto& d : in.devices)
    if (filter.matches(d)) device_ok.insert(d.key);
  for (const auto& p : in.problems)
    if (filter.matches(p)) problem_ok.insert(p.key);

  for (auto& w : in.winners)
    if (device_ok.count(w.device_key) && problem_ok.count(w.problem_key)) set.winners.push_back(std::move(w));
  sort_winners(set.winners);

  std::set<std::int64_t> winning_ids;
  for (const auto& w : set.winners) winning_ids.insert(w.result_id);
  for (auto& r : in.results) {
    const bool selected = set.filter.all_results
                              ? device_ok.count(r.device_key) && problem_ok.count(r.problem_key)
                              : winning_ids.count(r.id) > 0;
    if (selected) set.results.push_back(std::move(r));
  }
  std::sort(set.results.begin(), set.results.end(),
            [](const ResultRecord& a, const ResultRecord& b) { return a.id < b.id; });
  for (auto& c : in.counters)
    if (set.result(c.result_id)) set.counters.push_back(std::move(c));

  std::set<std::string> used_devices, used_problems;
  std::set<std::pair<std::string, std::string>> used_templates;
  std::set<std::int64_t> used_sweeps;
  for (const auto& r : set.results) {
    used_devices.insert(r.device_key);
    used_problems.insert(r.problem_key);
    used_templates.insert({r.template_name, r.template_hash});
    if (r.sweep_id) used_sweeps.insert(r.sweep_id);
  }
  for (auto& d : in.devices)
    if (used_devices.count(d.key)) set.devices.push_back(std::move(d));
  for (auto& p : in.problems)
    if (used_problems.count(p.key)) set.problems.push_back(std::move(p));
  for (auto& t : in.templates)
    if (used_templates.count({t.name, t.hash})) set.templates.push_back(std::move(t));
  for (auto& s : in.sweeps)
    if (used_sweeps.count(s.id)) set.sweeps.push_back(std::move(s));
  for (auto& c : in.measured_ceilings)
    if (used_devices.count(c.device_key)) set.measured_ceilings.push_back(std::move(c));
  return set;
}

Result<TuningSet> read_tuning_set(Database& db, const TuningFilter& filter) {
  TuningSet all;
  all.source = db.path();
  all.source_schema_version = db.schema_version();
  all.filter.all_results = true;
  KF_TRY_ASSIGN(devices, db.devices());
  KF_TRY_ASSIGN(problems, db.problems());
  KF_TRY_ASSIGN(templates, db.templates());
  KF_TRY_ASSIGN(sweeps, db.sweeps());
  KF_TRY_ASSIGN(winners, db.winners());
  KF_TRY_ASSIGN(results, db.results());
  all.devices = std::move(devices);
  all.problems = std::move(problems);
  all.templates = std::move(templates);
  all.sweeps = std::move(sweeps);
  all.winners = std::move(winners);
  all.results = std::move(results);
  KF_TRY_ASSIGN(counters, db.counters());
  all.counters = std::move(counters);
  KF_TRY_ASSIGN(ceilings, db.measured_ceilings());
  all.measured_ceilings = std::move(ceilings);
  return filter_tuning_set(std::move(all), filter);
}

Result<TuningSet> load_tuning_set(const std::string& path, const TuningFilter& filter) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec)) {
    return Error::bad_input(path + ": not a database file (" +
                            (std::filesystem::is_directory(path, ec) ? "a directory" : "not a regular file") + ")");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::bad_input(path + ": cannot open file");
  char head[16] = {};
  in.read(head, sizeof head);
  const std::string magic(head, static_cast<std::size_t>(in.gcount()));
  if (magic.rfind("SQLite format 3", 0) == 0) {
    KF_TRY_ASSIGN(db, Database::open(path, Database::Mode::kReadOnly));
    return read_tuning_set(*db, filter);
  }
  const auto first = magic.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || magic[first] != '{') {
    // The file's first bytes are the value at fault (a JSON error's "value").
    return Error::bad_input(path + ": neither a tuning database nor a JSON export: it starts with '" +
                            printable(magic) + "', neither the SQLite header nor an opening brace");
  }
  in.clear();
  in.seekg(0);
  std::stringstream text;
  text << in.rdbuf();
  KF_TRY_ASSIGN(set, parse_interchange_json(text.str(), path));
  return filter_tuning_set(std::move(set), filter);
}

Result<ImportCounts> import_tuning_set(Database& db, const TuningSet& set) {
  const std::string& src = set.source;
  // Check every reference before the first write.
  for (const auto& r : set.results) {
    const std::string where = src + ": result " + std::to_string(r.id);
    if (!set.device(r.device_key)) return Error::bad_input(where + ": unknown device '" + r.device_key + "'");
    if (!set.problem(r.problem_key)) return Error::bad_input(where + ": unknown problem '" + r.problem_key + "'");
    if (!set.find_template(r.template_name, r.template_hash)) {
      return Error::bad_input(where + ": unknown template version '" + r.template_name + "' hash '" +
                              r.template_hash + "'");
    }
    if (r.sweep_id && !set.sweep(r.sweep_id)) {
      return Error::bad_input(where + ": unknown sweep " + std::to_string(r.sweep_id));
    }
  }
  for (const auto& w : set.winners) {
    const ResultRecord* r = set.result(w.result_id);
    if (!r || r->status != "ok" || r->config != w.config || r->device_key != w.device_key ||
        r->problem_key != w.problem_key || r->template_name != w.template_name) {
      return Error::bad_input(src + ": winner " + w.problem_key + " " + w.config + ": result " +
                              std::to_string(w.result_id) + " is missing or does not match it");
    }
  }

  for (const auto& c : set.counters) {
    if (!set.result(c.result_id)) {
      return Error::bad_input(src + ": counters row '" + c.name + "' of collector '" + c.collector +
                              "': unknown result " + std::to_string(c.result_id));
    }
  }

  ImportCounts counts;
  std::map<std::string, std::int64_t> device_ids, problem_ids;
  std::map<std::pair<std::string, std::string>, std::int64_t> template_ids;
  std::map<std::int64_t, std::int64_t> sweep_ids;
  for (const auto& d : set.devices) {
    KF_TRY_ASSIGN(id, db.put_device(d));
    device_ids[d.key] = id;
    ++counts.devices;
  }
  for (const auto& p : set.problems) {
    KF_TRY_ASSIGN(id, db.put_problem(p));
    problem_ids[p.key] = id;
    ++counts.problems;
  }
  for (const auto& t : set.templates) {
    KF_TRY_ASSIGN(id, db.put_template(t));
    template_ids[{t.name, t.hash}] = id;
    ++counts.templates;
  }
  KF_TRY_ASSIGN(stored_sweeps, db.sweeps());
  for (const auto& s : set.sweeps) {
    auto same = std::find_if(stored_sweeps.begin(), stored_sweeps.end(),
                             [&](const SweepRecord& x) { return same_sweep(x, s); });
    if (same != stored_sweeps.end()) {
      sweep_ids[s.id] = same->id;
      ++counts.sweeps_found;
      continue;
    }
    KF_TRY_ASSIGN(id, db.begin_sweep(s));
    sweep_ids[s.id] = id;
    SweepRecord stored = s;
    stored.id = id;
    stored_sweeps.push_back(std::move(stored));
    ++counts.sweeps_added;
  }
  for (const auto& r : set.results) {
    ResultRecord copy = r;
    copy.id = 0;
    copy.sweep_id = r.sweep_id ? sweep_ids.at(r.sweep_id) : 0;
    copy.device_id = device_ids.at(r.device_key);
    copy.problem_id = problem_ids.at(r.problem_key);
    copy.template_id = template_ids.at({r.template_name, r.template_hash});
    KF_TRY_ASSIGN(added, db.add_result(copy));
    ++(added ? counts.results_added : counts.results_present);
    KF_TRY(import_counters(db, set.counters_of(r.id), copy, counts));
  }
  return counts;
}

}  // namespace kforge
