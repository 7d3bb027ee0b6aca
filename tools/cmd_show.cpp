// `kforge show`: what a tuning database holds: winners, and optionally every result.
#include <iostream>

#include "core/bounded_json.hpp"
#include "db/database.hpp"
#include "report/counter_summary.hpp"
#include "report/device_ceilings.hpp"
#include "report/vendor_comparison.hpp"
#include "tools/commands.hpp"

namespace kforge::cli {

using namespace kforge::report;  // the command prints what the report library computes

namespace {

/// The width of the results table's reason column; a longer reason is
/// listed in full below the table (and in --json).
constexpr std::size_t kReasonColumn = 80;

struct ShowOptions {
  bool results = false;
  std::string problem;
  std::string ceilings;  ///< --ceilings FILE: device peaks for the bound verdicts
};

/// Each result's counters and bound verdict (docs/profiling.md).
class CounterView {
 public:
  CounterView(Database& db, const std::vector<DeviceRecord>& devices,
              const std::vector<DeviceCeilings>& user) {
    for (auto& r : unwrap(db.counters())) by_result_[r.result_id].push_back(std::move(r));
    const auto measured = unwrap(db.measured_ceilings());
    for (const auto& d : devices) ceilings_[d.key] = find_ceilings(d, user, measured);
  }
  const std::vector<CounterRecord>& of(std::int64_t result_id) const {
    static const std::vector<CounterRecord> none;
    const auto it = by_result_.find(result_id);
    return it == by_result_.end() ? none : it->second;
  }
  BoundVerdict verdict(std::int64_t result_id, const std::string& device_key, double median_ms,
                       const std::string& dtype) {
    return verdict_for(median_ms, of(result_id), ceilings_[device_key], dtype);
  }
  /// counters and bound as JSON, or nothing when the result has no counter row.
  void add_json(nlohmann::json& j, std::int64_t result_id, const std::string& device_key, double median_ms,
                const std::string& dtype) {
    if (of(result_id).empty()) return;
    j["counters"] = counters_json(of(result_id));
    j["bound"] = verdict(result_id, device_key, median_ms, dtype).to_json();
  }

 private:
  std::map<std::int64_t, std::vector<CounterRecord>> by_result_;
  std::map<std::string, std::optional<DeviceCeilings>> ceilings_;
};

/// The dtype in a problem key (op/dims/dtype/layout), for the ceiling that applies.
std::string dtype_of(const std::string& problem_key) {
  const auto last = problem_key.rfind('/');
  const auto before = last == std::string::npos ? std::string::npos : problem_key.rfind('/', last - 1);
  return before == std::string::npos ? "" : problem_key.substr(before + 1, last - before - 1);
}

/// A JSON column of one row, or `fallback` with a warning naming the row when
/// it does not parse (or nests too deep to write out again).
nlohmann::json column_json(const std::string& text, const std::string& where, nlohmann::json fallback) {
  if (text.empty()) return fallback;
  auto parsed = parse_json_bounded(text, where);
  if (parsed.ok()) return std::move(parsed).value();
  std::cerr << "kforge: warning: " << parsed.error().message << "; shown as " << fallback.dump() << "\n";
  return fallback;
}

nlohmann::json result_json(const ResultRecord& r) {
  const std::string row = "results row " + std::to_string(r.id);
  nlohmann::json samples = column_json(r.samples_json, row + " samples_json", nlohmann::json::array());
  // The clock record is stored in resources_json under "clocks" (docs/measurement.md, "Clocks").
  const auto resources = column_json(r.resources_json, row + " resources_json", nlohmann::json::object());
  const nlohmann::json clocks = resources.is_object() && resources.contains("clocks") ? resources["clocks"] : nullptr;
  return {{"id", r.id},           {"sweep_id", r.sweep_id},     {"device_key", r.device_key},
          {"problem", r.problem_key}, {"template", r.template_name}, {"template_hash", r.template_hash},
          {"config", r.config},   {"status", r.status},         {"reason", r.reason},
          {"median_ms", r.median_ms}, {"p20_ms", r.p20_ms},     {"p80_ms", r.p80_ms},
          {"min_ms", r.min_ms},   {"max_ms", r.max_ms},         {"count", r.count},
          {"samples_ms", samples}, {"error_norm", r.error_norm}, {"error_ratio", r.error_ratio},
          {"compile_ms", r.compile_ms}, {"compile_log", r.compile_log}, {"clocks", clocks},
          {"created_at", r.created_at}};
}

/// kforge's best against the vendor's, for the problems a library candidate was tuned on.
void print_vendor_table(const std::vector<VendorComparison>& versus,
                        std::map<std::string, std::string>& names) {
  std::vector<std::vector<std::string>> rows;
  auto side = [](const ComparedEntry& e) {
    return e.template_name.empty() ? std::string("-")
                                   : e.template_name + " " + e.config + " " + fmt(e.median_ms);
  };
  for (const auto& v : versus) {
    if (v.library.template_name.empty()) continue;
    rows.push_back({names[v.device_key], v.problem_key, side(v.kernel), side(v.library),
                    v.ratio > 0 ? fmt(v.ratio, 3) : "-", v.faster.empty() ? "-" : v.faster});
  }
  if (rows.empty()) return;
  std::cout << "\nkforge vs vendor library (ratio: kernel median / library median; above 1 the library is "
               "faster):\n";
  print_table({"device", "problem", "kforge best (ms)", "library best (ms)", "ratio", "faster"}, rows);
}

/// What `show` lists, read from the database once.
struct ShowData {
  std::vector<WinnerRecord> winners;
  std::vector<DeviceRecord> devices;
  std::vector<VendorComparison> versus;
  std::vector<ResultRecord> results;  ///< with --results
};

void print_show_json(const ShowOptions& s, const CommonOptions& o, Database& db, ShowData& d, CounterView& counters) {
  nlohmann::json j = {{"database", o.db}, {"database_schema_version", db.schema_version()}};
  j["devices"] = nlohmann::json::array();
  for (const auto& dev : d.devices)
    j["devices"].push_back({{"key", dev.key}, {"backend", dev.backend}, {"vendor", dev.vendor}, {"name", dev.name},
                            {"arch", dev.arch}, {"info", column_json(dev.info_json, "devices row " + dev.key + " info_json", nullptr)}});
  j["winners"] = nlohmann::json::array();
  for (const auto& w : d.winners) {
    nlohmann::json e = {{"device_key", w.device_key},  {"problem", w.problem_key},
                        {"template", w.template_name}, {"template_hash", w.template_hash},
                        {"config", w.config},          {"median_ms", w.median_ms},
                        {"result_id", w.result_id},    {"tuned_by", w.online.empty() ? "offline" : "online"}};
    if (!w.online.empty()) e["online_mode"] = w.online;
    counters.add_json(e, w.result_id, w.device_key, w.median_ms, w.dtype);
    j["winners"].push_back(e);
  }
  j["vendor_comparison"] = nlohmann::json::array();
  for (const auto& v : d.versus)
    if (!v.library.template_name.empty()) j["vendor_comparison"].push_back(v.to_json());
  if (s.results) {
    j["results"] = nlohmann::json::array();
    for (const auto& r : d.results) {
      nlohmann::json e = result_json(r);
      counters.add_json(e, r.id, r.device_key, r.median_ms, dtype_of(r.problem_key));
      j["results"].push_back(e);
    }
  }
  print_json(j);
}

/// --results as text: every result (long reasons in full after the table),
/// then each profiled result's verdict and headline counters.
void print_results_text(const std::vector<ResultRecord>& results, CounterView& counters) {
  std::vector<std::vector<std::string>> rows;
  std::vector<const ResultRecord*> cut;  // listed in full after the table
  for (const auto& r : results) {
    const bool long_reason = r.reason.size() > kReasonColumn;
    if (long_reason) cut.push_back(&r);
    rows.push_back({r.problem_key, r.template_name, r.config, r.status, r.status == "ok" ? fmt(r.median_ms) : "-",
                    long_reason ? r.reason.substr(0, kReasonColumn - 3) + "..." : r.reason});
  }
  std::cout << "\nresults:\n";
  print_table({"problem", "template", "config", "status", "median ms", "reason"}, rows);
  if (!cut.empty()) std::cout << "\nfull reasons:\n";
  for (const auto* r : cut) std::cout << r->template_name << " " << r->config << ": " << r->reason << "\n";
  rows.clear();
  for (const auto& r : results) {
    if (counters.of(r.id).empty()) continue;
    rows.push_back({r.problem_key, r.template_name, r.config,
                    counters.verdict(r.id, r.device_key, r.median_ms, dtype_of(r.problem_key)).text,
                    counters_line(counters.of(r.id))});
  }
  if (!rows.empty()) {
    std::cout << "\ncounters (separate launches; the timings above are never from them):\n";
    print_table({"problem", "template", "config", "bound", "counters"}, rows);
  }
}

void print_show_text(const ShowOptions& s, const CommonOptions& o, const ShowData& d, CounterView& counters) {
  std::map<std::string, std::string> device_names;
  for (const auto& dev : d.devices) device_names[dev.key] = dev.name;
  std::vector<std::vector<std::string>> rows;
  for (const auto& w : d.winners) {
    rows.push_back({device_names[w.device_key], w.problem_key, w.template_name, w.config, fmt(w.median_ms),
                    w.online.empty() ? "offline" : "online (" + w.online + ")"});
  }
  std::cout << "winners in " << o.db << ":\n";
  print_table({"device", "problem", "template", "config", "median ms", "tuned by"}, rows);
  print_vendor_table(d.versus, device_names);
  std::vector<std::vector<std::string>> bounds;
  for (const auto& w : d.winners) {
    if (counters.of(w.result_id).empty()) continue;
    bounds.push_back({w.problem_key, w.template_name, w.config,
                      counters.verdict(w.result_id, w.device_key, w.median_ms, w.dtype).text});
  }
  if (!bounds.empty()) {
    std::cout << "\nwhat bounds each winner (docs/profiling.md):\n";
    print_table({"problem", "template", "config", "bound"}, bounds);
  }
  if (s.results) print_results_text(d.results, counters);
}

void run_show(const ShowOptions& s, CommonOptions& o) {
  auto db = unwrap(Database::open(o.db, Database::Mode::kReadOnly));
  ShowData d;
  Database::WinnerFilter wf;
  if (!s.problem.empty()) wf.problem_key = s.problem;
  d.winners = unwrap(db->winners(wf));
  d.devices = unwrap(db->devices());
  CounterView counters(*db, d.devices,
                       s.ceilings.empty() ? std::vector<DeviceCeilings>{} : unwrap(load_ceilings(s.ceilings)));
  d.versus = compare_vendor(d.winners, make_catalog(o));
  if (s.results) {
    Database::ResultFilter rf;
    if (!s.problem.empty()) rf.problem_key = s.problem;
    d.results = unwrap(db->results(rf));
  }
  if (o.json) return print_show_json(s, o, *db, d, counters);
  print_show_text(s, o, d, counters);
}

}  // namespace

void add_show_command(CLI::App& app, CommonOptions& o) {
  auto* cmd = app.add_subcommand("show", "Show the winners stored in a tuning database (and every result with --results)");
  auto s = std::make_shared<ShowOptions>();
  add_db_flag(*cmd, o);
  add_json_flag(*cmd, o);
  cmd->add_flag("--results", s->results, "Also list every evaluated candidate");
  cmd->add_option("--problem", s->problem, "Only this problem key, e.g. gemm/K=256,M=256,N=256,batch=1/f32/NN");
  cmd->add_option(
      "--ceilings", s->ceilings,
      "JSON file of device peaks for the bound verdicts (docs/report.md); default: the built-in table");
  cmd->callback([&o, s] { run_show(*s, o); });
}

}  // namespace kforge::cli
