// CSV, Markdown and C++ header renderings of exported tuning rows.
#include "report/export_formats.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/bounded_json.hpp"
#include "core/printable.hpp"
#include "db/json_interchange.hpp"
#include "generator/config.hpp"
#include "generator/manifest.hpp"
#include "runtime/catalog/entry_check.hpp"

namespace kforge::report {

namespace {

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_line(const std::vector<std::string>& cells) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i) line += ',';
    line += csv_cell(cells[i]);
  }
  return line + "\r\n";
}

/// A Markdown table cell: pipes escaped, line breaks flattened.
std::string md_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

std::string md_row(const std::vector<std::string>& cells) {
  std::string line = "|";
  for (const auto& c : cells) {
    line += ' ';
    line += md_cell(c);
    line += " |";
  }
  return line + "\n";
}

std::string md_rule(std::size_t n) {
  std::string line = "|";
  for (std::size_t i = 0; i < n; ++i) line += "---|";
  return line + "\n";
}

/// A C++ string literal; octal escapes (always three digits) for anything unprintable.
std::string cpp_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f || c == '?') {  // '?' avoids trigraphs in old dialects
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string cpp_double(double v) {
  std::string s = exact_number(v);
  if (s.empty()) return "0.0";
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string filters_text(const TuningFilter& f) {
  std::string s;
  auto add = [&s](const char* name, const std::optional<std::string>& v) {
    if (v) s += (s.empty() ? "" : ", ") + std::string(name) + "=" + *v;
  };
  add("device", f.device);
  add("op", f.op);
  add("dtype", f.dtype);
  add("layout", f.layout);
  add("problem", f.problem_key);
  return s.empty() ? "none" : s;
}

std::string source_name(const TuningSet& set) { return std::filesystem::path(set.source).filename().string(); }

std::string gflops_text(const ExportRow& r) {
  return r.throughput && r.result->status == "ok" ? short_number(r.throughput->gflops) : "-";
}

}  // namespace

std::vector<ExportRow> export_rows(const TuningSet& set, const TemplateCatalog& catalog) {
  // Winners come sorted by device, problem and time: the first of each
  // (device, problem) is its best.
  std::set<std::int64_t> winner_ids, best_ids;
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& w : set.winners) {
    winner_ids.insert(w.result_id);
    if (seen.insert({w.device_key, w.problem_key}).second) best_ids.insert(w.result_id);
  }
  auto make = [&](const ResultRecord* r) -> std::optional<ExportRow> {
    ExportRow row;
    row.result = r;
    row.device = set.device(r->device_key);
    row.problem = set.problem(r->problem_key);
    if (!row.device || !row.problem) return std::nullopt;
    row.winner = winner_ids.count(r->id) > 0;
    row.best = best_ids.count(r->id) > 0;
    row.state = template_state(catalog, r->template_name, r->template_hash, row.device->backend);
    if (r->status == "ok") row.throughput = throughput_of(*row.problem, r->median_ms);
    return row;
  };
  std::vector<ExportRow> rows;
  if (set.filter.all_results) {
    for (const auto& r : set.results)
      if (auto row = make(&r)) rows.push_back(std::move(*row));
    return rows;
  }
  for (const auto& w : set.winners) {
    if (const ResultRecord* r = set.result(w.result_id))
      if (auto row = make(r)) rows.push_back(std::move(*row));
  }
  return rows;
}

TuningSet without_stale(TuningSet set, const TemplateCatalog& catalog, int& dropped) {
  dropped = 0;
  auto stale = [&](const std::string& device_key, const std::string& name, const std::string& hash) {
    const DeviceRecord* d = set.device(device_key);
    return d && template_state(catalog, name, hash, d->backend) == "stale";
  };
  std::vector<WinnerRecord> winners;
  for (auto& w : set.winners) {
    if (stale(w.device_key, w.template_name, w.template_hash)) {
      ++dropped;
    } else {
      winners.push_back(std::move(w));
    }
  }
  std::vector<ResultRecord> results;
  for (auto& r : set.results)
    if (!stale(r.device_key, r.template_name, r.template_hash)) results.push_back(std::move(r));
  set.winners = std::move(winners);
  set.results = std::move(results);
  const TuningFilter filter = set.filter;
  return filter_tuning_set(std::move(set), filter);
}

namespace {

/// Why the template version `r` was recorded under does not declare its
/// configuration; empty when it does. The version's stored manifest decides,
/// as it does for the database's winner slot; where that version is the
/// catalog's current one, the catalog's template must declare it too (the
/// stored text is input: edited, it keeps its hash), as the lookup checks.
/// A stored manifest that does not parse is checked by the lookup's
/// EntryChecker against the catalog's template of that name; a template
/// neither knows must at least name a configuration.
class DeclaredCheck {
 public:
  DeclaredCheck(const TuningSet& set, const TemplateCatalog& catalog) : set_(set), catalog_(catalog) {}

  std::string why_not(const std::string& name, const std::string& hash, const std::string& config,
                      const std::string& device_key) {
    const DeviceRecord* d = set_.device(device_key);
    const std::string backend = d ? d->backend : "";
    if (const TemplateManifest* m = stored_manifest(name, hash)) {
      Status s = m->check_declared_name(config);
      if (!s.ok()) return s.error().message;
      if (template_state(catalog_, name, hash, backend) != "current") return "";
    }
    if (catalog_.find(name)) {
      const EntryCheck c = checker(backend).check_stored(name, "", config);
      return c.verdict == EntryVerdict::kInvalid ? c.reason : "";
    }
    auto parsed = Config::parse(config);
    return parsed.ok() ? "" : parsed.error().message;
  }

 private:
  const TemplateManifest* stored_manifest(const std::string& name, const std::string& hash) {
    auto [it, fresh] = manifests_.try_emplace(name + "\n" + hash);
    if (fresh) {
      if (const TemplateRecord* t = set_.find_template(name, hash)) {
        if (auto m = TemplateManifest::parse(t->manifest_json, name); m.ok()) it->second = std::move(*m);
      }
    }
    return it->second ? &*it->second : nullptr;
  }
  const EntryChecker& checker(const std::string& backend) {
    auto& c = checkers_[backend];
    if (!c) {
      DeviceInfo info;
      info.backend = backend;
      c = std::make_unique<EntryChecker>(catalog_, info);
    }
    return *c;
  }

  const TuningSet& set_;
  const TemplateCatalog& catalog_;
  std::map<std::string, std::optional<TemplateManifest>> manifests_;
  std::map<std::string, std::unique_ptr<EntryChecker>> checkers_;
};

}  // namespace

namespace {

/// Why a stored problem's dims cannot be a problem ("" when they can): an
/// object of positive integers that fit a 32-bit kernel argument.
std::string bad_dims(const ProblemRecord& p) {
  const auto j = parse_json_bounded(p.dims_json, "problems.dims_json");
  if (!j.ok()) return j.error().message;
  if (!j->is_object()) return "problems.dims_json '" + printable(p.dims_json) + "' is not an object of dims";
  for (const auto& kv : j->items()) {
    const auto& v = kv.value();
    if (!v.is_number_integer() || v.get<std::int64_t>() <= 0 ||
        v.get<std::int64_t>() > std::numeric_limits<std::int32_t>::max()) {
      return "problems.dims_json: dim " + printable(kv.key()) + " is '" + json_excerpt(v) +
             "', not a positive 32-bit integer";
    }
  }
  return "";
}

}  // namespace

TuningSet without_undeclared(TuningSet set, const TemplateCatalog& catalog, std::vector<std::string>& skipped) {
  DeclaredCheck check(set, catalog);
  std::map<std::string, std::string> bad_problems;  // key -> why
  for (const auto& p : set.problems) {
    if (std::string why = bad_dims(p); !why.empty()) bad_problems.emplace(p.key, std::move(why));
  }
  std::set<std::int64_t> bad;
  for (const auto& r : set.results) {
    std::string why = check.why_not(r.template_name, r.template_hash, r.config, r.device_key);
    if (auto p = bad_problems.find(r.problem_key); why.empty() && p != bad_problems.end()) why = p->second;
    if (why.empty()) continue;
    bad.insert(r.id);
    skipped.push_back("result " + std::to_string(r.id) + " (" + r.template_name + " " + printable(r.config) +
                      ", device " + r.device_key + ", problem " + r.problem_key + "): " + why);
  }
  std::vector<WinnerRecord> winners;
  for (auto& w : set.winners) {
    if (bad.count(w.result_id)) continue;
    std::string why = check.why_not(w.template_name, w.template_hash, w.config, w.device_key);
    if (why.empty()) why = w.disagreement;  // served only when it agrees with its result row
    if (auto p = bad_problems.find(w.problem_key); why.empty() && p != bad_problems.end()) why = p->second;
    if (!why.empty()) {
      skipped.push_back("winner " + w.template_name + " " + printable(w.config) + " (device " + w.device_key +
                        ", problem " + w.problem_key + "): " + why);
      continue;
    }
    winners.push_back(std::move(w));
  }
  std::vector<ResultRecord> results;
  for (auto& r : set.results)
    if (!bad.count(r.id)) results.push_back(std::move(r));
  std::vector<ProblemRecord> problems;
  for (auto& p : set.problems)
    if (!bad_problems.count(p.key)) problems.push_back(std::move(p));
  set.problems = std::move(problems);
  set.winners = std::move(winners);
  set.results = std::move(results);
  const TuningFilter filter = set.filter;
  return filter_tuning_set(std::move(set), filter);
}

namespace {

/// Integer dims of a stored problem, by name; empty when malformed.
std::map<std::string, std::int64_t> dims_of(const ProblemRecord& p) {
  std::map<std::string, std::int64_t> dims;
  const auto j = parse_json_bounded(p.dims_json, "problems.dims_json");
  if (!j.ok() || !j->is_object()) return dims;
  for (const auto& kv : j->items())
    if (kv.value().is_number_integer()) dims[kv.key()] = kv.value().get<std::int64_t>();
  return dims;
}

std::map<std::string, std::int64_t> params_of(const ResultRecord& r) {
  auto c = Config::parse(r.config);
  return c.ok() ? c->values : std::map<std::string, std::int64_t>{};
}

/// The names of every row's dims (or parameters), sorted: one column each.
template <typename Of>
std::vector<std::string> union_of(const std::vector<ExportRow>& rows, Of of) {
  std::set<std::string> names;
  for (const auto& row : rows)
    for (const auto& [name, _] : of(row)) names.insert(name);
  return {names.begin(), names.end()};
}

std::string cell_of(const std::map<std::string, std::int64_t>& values, const std::string& name) {
  auto it = values.find(name);
  return it == values.end() ? std::string() : std::to_string(it->second);
}

}  // namespace

std::string render_csv(const TuningSet& set, const std::vector<ExportRow>& rows) {
  std::string out;
  const bool all = set.filter.all_results;
  const auto dim_names = union_of(rows, [](const ExportRow& r) { return dims_of(*r.problem); });
  const auto param_names = union_of(rows, [](const ExportRow& r) { return params_of(*r.result); });
  std::vector<std::string> header = {"device_key", "device_name", "backend", "arch", "op", "problem"};
  header.insert(header.end(), dim_names.begin(), dim_names.end());
  header.insert(header.end(), {"dtype", "layout", "template", "template_hash", "template_state", "config"});
  // A parameter named like another column (a dim, say) keeps its own column.
  const std::set<std::string> taken(header.begin(), header.end());
  for (const auto& n : param_names) header.push_back(taken.count(n) ? "param_" + n : n);
  if (all) header.insert(header.end(), {"status", "reason"});
  header.insert(header.end(), {"median_ms", "p20_ms", "p80_ms", "min_ms", "max_ms", "count", "flops", "bytes",
                               "gflops", "gbps", "error_norm", "error_ratio", "compile_ms", "created_at", "winner",
                               "best"});
  out += csv_line(header);
  for (const auto& row : rows) {
    const auto& r = *row.result;
    const auto& p = *row.problem;
    const auto& d = *row.device;
    std::vector<std::string> cells = {d.key, d.name, d.backend, d.arch, p.op, p.key};
    const auto dims = dims_of(p);
    for (const auto& n : dim_names) cells.push_back(cell_of(dims, n));
    cells.insert(cells.end(), {p.dtype, p.layout, r.template_name, r.template_hash, row.state, r.config});
    const auto params = params_of(r);
    for (const auto& n : param_names) cells.push_back(cell_of(params, n));
    if (all) cells.insert(cells.end(), {r.status, r.reason});
    const bool ok = r.status == "ok";
    const auto cost = cost_of(p);
    cells.insert(cells.end(),
                 {ok ? exact_number(r.median_ms) : "", ok ? exact_number(r.p20_ms) : "",
                  ok ? exact_number(r.p80_ms) : "", ok ? exact_number(r.min_ms) : "",
                  ok ? exact_number(r.max_ms) : "", std::to_string(r.count),
                  cost ? exact_number(cost->flops) : "", cost ? exact_number(cost->bytes) : "",
                  row.throughput ? exact_number(row.throughput->gflops) : "",
                  row.throughput ? exact_number(row.throughput->gbps) : "", exact_number(r.error_norm),
                  exact_number(r.error_ratio), exact_number(r.compile_ms), r.created_at,
                  row.winner ? "yes" : "no", row.best ? "yes" : "no"});
    out += csv_line(cells);
  }
  return out;
}

std::string render_markdown(const TuningSet& set, const std::vector<ExportRow>& rows) {
  const bool all = set.filter.all_results;
  std::ostringstream out;
  std::set<std::string> problems;
  for (const auto& row : rows) problems.insert(row.problem->key);
  std::size_t winners = 0;
  for (const auto& row : rows) winners += row.winner ? 1 : 0;
  out << "# kforge tuning " << (all ? "results" : "winners") << "\n\n";
  out << "Exported from `" << source_name(set) << "` (schema " << set.source_schema_version
      << "). Filters: " << filters_text(set.filter) << ". " << set.devices.size() << " device"
      << (set.devices.size() == 1 ? "" : "s") << ", " << problems.size() << " problem"
      << (problems.size() == 1 ? "" : "s") << ", " << winners << " winner" << (winners == 1 ? "" : "s");
  if (all) out << ", " << rows.size() << " result" << (rows.size() == 1 ? "" : "s");
  out << ".\n";
  out << "\nTimes are medians of the timed repetitions; p20–p80 is the middle 60% of them. "
         "GFLOP/s and GB/s use the operator's flop count and minimum bytes moved. "
         "`best` marks the fastest winner of its device and problem; `state` says whether the "
         "template version is the one this kforge builds now (current), an older one (stale), "
         "or one it does not know (unknown).\n";
  for (const auto& d : set.devices) {
    std::vector<const ExportRow*> mine;
    for (const auto& row : rows)
      if (row.device == &d) mine.push_back(&row);
    if (mine.empty()) continue;
    out << "\n## " << md_cell(d.name) << " (" << d.backend << ", " << d.arch << ")\n\n";
    out << "Device key `" << d.key << "`, vendor " << md_cell(d.vendor) << (d.vendor.ends_with('.') ? "" : ".")
        << "\n\n";
    if (all) {
      const std::vector<std::string> h = {"problem", "template", "config", "status", "median ms", "GFLOP/s", "winner",
                                          "reason"};
      out << md_row(h) << md_rule(h.size());
      for (const auto* row : mine) {
        const auto& r = *row->result;
        const bool ok = r.status == "ok";
        out << md_row({row->problem->key, r.template_name, r.config, r.status, ok ? short_number(r.median_ms) : "-",
                       gflops_text(*row), row->best ? "best" : (row->winner ? "yes" : ""), r.reason});
      }
      continue;
    }
    const std::vector<std::string> h = {"problem", "template", "config", "median ms", "p20–p80 ms", "GFLOP/s", "GB/s",
                                        "state", "best"};
    out << md_row(h) << md_rule(h.size());
    for (const auto* row : mine) {
      const auto& r = *row->result;
      out << md_row({row->problem->key, r.template_name, r.config, short_number(r.median_ms),
                     short_number(r.p20_ms) + "–" + short_number(r.p80_ms), gflops_text(*row),
                     row->throughput ? short_number(row->throughput->gbps) : "-", row->state,
                     row->best ? "best" : ""});
    }
  }
  if (rows.empty()) out << "\nNothing matched.\n";
  return out.str();
}

std::string render_header(const TuningSet& set, const std::vector<ExportRow>& rows, const std::string& ns) {
  struct Item {
    const ExportRow* row;
    std::map<std::string, std::int64_t> dims;
    std::map<std::string, std::int64_t> params;
  };
  std::vector<Item> items;
  std::size_t max_dims = 1, max_params = 1;
  for (const auto& row : rows) {
    if (!row.best) continue;
    Item it{&row, dims_of(*row.problem), params_of(*row.result)};
    max_dims = std::max(max_dims, it.dims.size());
    max_params = std::max(max_params, it.params.size());
    items.push_back(std::move(it));
  }

  std::ostringstream h;
  h << "// Generated by `kforge export --format header` from " << source_name(set)
    << " (filters: " << filters_text(set.filter) << ").\n"
    << "// The fastest tuned configuration per (device, problem) as a constexpr table.\n"
    << "// Needs C++17 only: no SQLite, no kforge. Format: docs/export.md. Regenerate, do not edit.\n"
    << "#pragma once\n\n#include <cstddef>\n#include <cstdint>\n#include <string_view>\n\n"
    << "namespace " << ns << " {\n\n"
    << "/// Version of this header's layout (kforge's JSON interchange schema).\n"
    << "inline constexpr int kSchemaVersion = " << kInterchangeSchemaVersion << ";\n"
    << "inline constexpr std::size_t kMaxDims = " << max_dims << ";\n"
    << "inline constexpr std::size_t kMaxParams = " << max_params << ";\n\n"
    << "struct Value {\n  std::string_view name;\n  std::int64_t value;\n};\n\n"
    << "struct Entry {\n"
    << "  std::string_view device_key;  ///< kforge's hardware key of the device\n"
    << "  std::string_view device_name;\n  std::string_view backend;\n  std::string_view arch;\n"
    << "  std::string_view op;\n"
    << "  std::string_view problem_key;  ///< op/dims/dtype/layout, as `kforge show` prints it\n"
    << "  std::string_view dtype;\n  std::string_view layout;\n"
    << "  Value dims[kMaxDims];\n  std::size_t num_dims;\n"
    << "  std::string_view template_name;\n  std::string_view template_hash;\n"
    << "  std::string_view config;  ///< canonical configuration name\n"
    << "  Value params[kMaxParams];\n  std::size_t num_params;\n"
    << "  double median_ms;  ///< median time measured when tuning\n\n"
    << "  /// The problem dimension `name`, or -1 when absent.\n"
    << "  constexpr std::int64_t dim(std::string_view name) const {\n"
    << "    for (std::size_t i = 0; i < num_dims; ++i)\n"
    << "      if (dims[i].name == name) return dims[i].value;\n"
    << "    return -1;\n  }\n"
    << "  /// The tuned parameter `name`, or -1 when absent.\n"
    << "  constexpr std::int64_t param(std::string_view name) const {\n"
    << "    for (std::size_t i = 0; i < num_params; ++i)\n"
    << "      if (params[i].name == name) return params[i].value;\n"
    << "    return -1;\n  }\n};\n\n"
    << "inline constexpr std::size_t kNumEntries = " << items.size() << ";\n\n"
    << "inline constexpr Entry kEntries[kNumEntries > 0 ? kNumEntries : 1] = {\n";
  for (const auto& it : items) {
    const auto& r = *it.row->result;
    const auto& p = *it.row->problem;
    const auto& d = *it.row->device;
    h << "    {" << cpp_string(d.key) << ", " << cpp_string(d.name) << ", " << cpp_string(d.backend) << ", "
      << cpp_string(d.arch) << ",\n     " << cpp_string(p.op) << ", " << cpp_string(p.key) << ", "
      << cpp_string(p.dtype) << ", " << cpp_string(p.layout) << ",\n     {";
    std::size_t i = 0;
    for (const auto& [k, v] : it.dims) h << (i++ ? ", " : "") << "{" << cpp_string(k) << ", " << v << "}";
    h << "}, " << it.dims.size() << ",\n     " << cpp_string(r.template_name) << ", " << cpp_string(r.template_hash)
      << ", " << cpp_string(r.config) << ",\n     {";
    i = 0;
    for (const auto& [k, v] : it.params) h << (i++ ? ", " : "") << "{" << cpp_string(k) << ", " << v << "}";
    h << "}, " << it.params.size() << ", " << cpp_double(r.median_ms) << "},\n";
  }
  h << "};\n\n"
    << "/// The entry for this device key and problem key, or nullptr.\n"
    << "constexpr const Entry* find(std::string_view device_key, std::string_view problem_key) {\n"
    << "  for (std::size_t i = 0; i < kNumEntries; ++i)\n"
    << "    if (kEntries[i].device_key == device_key && kEntries[i].problem_key == problem_key) return &kEntries[i];\n"
    << "  return nullptr;\n}\n\n"
    << "}  // namespace " << ns << "\n";
  return h.str();
}

}  // namespace kforge::report
