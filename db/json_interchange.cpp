// Writing and checking the JSON interchange format (docs/export.md).
#include "db/json_interchange.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "core/bounded_json.hpp"
#include "db/database.hpp"

namespace kforge {

namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

constexpr const char* kFormat = "kforge-tuning-export";

/// A column holding JSON text: embedded when it is an object or an array,
/// kept as the original string otherwise.
ojson embed(const std::string& text) {
  if (!text.empty() && (text.front() == '{' || text.front() == '[')) {
    // Text that does not parse within the depth bound is kept as it is.
    auto j = parse_ordered_json_bounded(text, "column");
    if (j.ok() && (j->is_object() || j->is_array())) return std::move(j).value();
  }
  return text;
}

ojson opt(const std::optional<std::string>& v) { return v ? ojson(*v) : ojson(nullptr); }

ojson number(double v) { return std::isfinite(v) ? ojson(v) : ojson(nullptr); }

ojson counter_json(const CounterRecord& c) {
  return {{"source", c.source},
          {"collector", c.collector},
          {"name", c.name},
          {"value", c.value ? number(*c.value) : ojson(nullptr)},
          {"unit", c.unit},
          {"note", c.note},
          {"tool", c.tool},
          {"counters_version", c.counters_version},
          {"created_at", c.created_at}};
}

/// Reads one document, naming the file and the field in every error.
class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  Error fail(const std::string& field, const std::string& what) const {
    return Error::bad_input(path_ + ": " + field + ": " + what);
  }

  Result<const json*> field(const json& obj, const std::string& where, const char* key) const {
    auto it = obj.find(key);
    if (it == obj.end()) return fail(where + key, "missing");
    return &*it;
  }

  Status known(const json& obj, const std::string& where, std::initializer_list<const char*> keys) const {
    for (const auto& item : obj.items()) {
      if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return item.key() == k; })) {
        return fail(where + item.key(), "unknown field");
      }
    }
    return ok_status();
  }

  Result<std::string> str(const json& obj, const std::string& where, const char* key, bool allow_empty = true) const {
    KF_TRY_ASSIGN(v, field(obj, where, key));
    if (!v->is_string()) return fail(where + key, "expected a string, got " + std::string(v->type_name()));
    auto s = v->get<std::string>();
    if (!allow_empty && s.empty()) return fail(where + key, "empty string");
    return s;
  }

  /// A string, or null read back as the empty string (sweeps.finished_at).
  Result<std::string> str_or_null(const json& obj, const std::string& where, const char* key) const {
    KF_TRY_ASSIGN(v, field(obj, where, key));
    if (v->is_null()) return std::string();
    return str(obj, where, key);
  }

  Result<std::optional<std::string>> opt_str(const json& obj, const std::string& where, const char* key) const {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return std::optional<std::string>();
    if (!it->is_string()) return fail(where + key, "expected a string or null, got " + std::string(it->type_name()));
    return std::optional<std::string>(it->get<std::string>());
  }

  /// A number; null stands for a value that was not finite.
  Result<double> num(const json& obj, const std::string& where, const char* key) const {
    KF_TRY_ASSIGN(v, field(obj, where, key));
    if (v->is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (!v->is_number()) return fail(where + key, "expected a number, got " + json_excerpt(*v));
    return v->get<double>();
  }

  Result<std::int64_t> integer(const json& obj, const std::string& where, const char* key) const {
    KF_TRY_ASSIGN(v, field(obj, where, key));
    if (!v->is_number_integer()) return fail(where + key, "expected an integer, got " + json_excerpt(*v));
    if (v->is_number_unsigned() && v->get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
      return fail(where + key, "integer out of range: " + json_excerpt(*v));
    return v->get<std::int64_t>();
  }

  Result<bool> boolean(const json& obj, const std::string& where, const char* key) const {
    KF_TRY_ASSIGN(v, field(obj, where, key));
    if (!v->is_boolean()) return fail(where + key, "expected true or false, got " + json_excerpt(*v));
    return v->get<bool>();
  }

  /// The inverse of embed(): a string is the original text, anything else is dumped.
  Result<std::string> text(const json& obj, const std::string& where, const char* key) const {
    KF_TRY_ASSIGN(v, field(obj, where, key));
    if (v->is_string()) return v->get<std::string>();
    if (v->is_object() || v->is_array()) return v->dump();
    return fail(where + key, "expected an object, an array or a string, got " + json_excerpt(*v));
  }

  Result<const json*> array(const json& obj, const char* key) const {
    KF_TRY_ASSIGN(v, field(obj, "", key));
    if (!v->is_array()) return fail(key, "expected an array, got " + std::string(v->type_name()));
    return v;
  }

  Result<const json*> object_at(const json& arr, const char* name, std::size_t i) const {
    if (!arr[i].is_object()) {
      return fail(std::string(name) + "[" + std::to_string(i) + "]",
                  "expected an object, got " + std::string(arr[i].type_name()));
    }
    return &arr[i];
  }

 private:
  std::string path_;
};

std::string at(const char* name, std::size_t i) { return std::string(name) + "[" + std::to_string(i) + "]."; }

bool is_status_word(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; });
}

Result<DeviceRecord> read_device(const Reader& rd, const json& j, const std::string& w) {
  KF_TRY(rd.known(j, w, {"key", "backend", "vendor", "name", "arch", "info"}));
  DeviceRecord d;
  KF_TRY_ASSIGN(key, rd.str(j, w, "key", false));
  KF_TRY_ASSIGN(backend, rd.str(j, w, "backend"));
  KF_TRY_ASSIGN(vendor, rd.str(j, w, "vendor"));
  KF_TRY_ASSIGN(name, rd.str(j, w, "name"));
  KF_TRY_ASSIGN(arch, rd.str(j, w, "arch"));
  KF_TRY_ASSIGN(info, rd.text(j, w, "info"));
  d.key = key;
  d.backend = backend;
  d.vendor = vendor;
  d.name = name;
  d.arch = arch;
  d.info_json = info;
  return d;
}

Result<TemplateRecord> read_template(const Reader& rd, const json& j, const std::string& w) {
  KF_TRY(rd.known(j, w, {"name", "op", "hash", "manifest"}));
  TemplateRecord t;
  KF_TRY_ASSIGN(name, rd.str(j, w, "name", false));
  KF_TRY_ASSIGN(op, rd.str(j, w, "op", false));
  KF_TRY_ASSIGN(hash, rd.str(j, w, "hash", false));
  KF_TRY_ASSIGN(manifest, rd.text(j, w, "manifest"));
  t.name = name;
  t.op = op;
  t.hash = hash;
  t.manifest_json = manifest;
  return t;
}

Result<ProblemRecord> read_problem(const Reader& rd, const json& j, const std::string& w) {
  KF_TRY(rd.known(j, w, {"key", "op", "dims", "dtype", "layout"}));
  ProblemRecord p;
  KF_TRY_ASSIGN(key, rd.str(j, w, "key", false));
  KF_TRY_ASSIGN(op, rd.str(j, w, "op", false));
  KF_TRY_ASSIGN(dims, rd.field(j, w, "dims"));
  if (!dims->is_object()) return rd.fail(w + "dims", "expected an object of dimensions, got " + json_excerpt(*dims));
  for (const auto& item : dims->items()) {
    if (!item.value().is_number_integer()) {
      return rd.fail(w + "dims." + item.key(), "expected an integer, got " + json_excerpt(item.value()));
    }
  }
  KF_TRY_ASSIGN(dtype, rd.str(j, w, "dtype", false));
  KF_TRY_ASSIGN(layout, rd.str(j, w, "layout"));
  p.key = key;
  p.op = op;
  p.dims_json = dims->dump();
  p.dtype = dtype;
  p.layout = layout;
  return p;
}

Result<SweepRecord> read_sweep(const Reader& rd, const json& j, const std::string& w) {
  KF_TRY(rd.known(j, w, {"id", "tool_version", "git_revision", "command_line", "settings", "device", "host",
                         "started_at", "finished_at"}));
  SweepRecord s;
  KF_TRY_ASSIGN(id, rd.integer(j, w, "id"));
  if (id <= 0) return rd.fail(w + "id", "expected a positive id, got " + std::to_string(id));
  KF_TRY_ASSIGN(tool_version, rd.str(j, w, "tool_version"));
  KF_TRY_ASSIGN(git_revision, rd.str(j, w, "git_revision"));
  KF_TRY_ASSIGN(command_line, rd.str(j, w, "command_line"));
  KF_TRY_ASSIGN(settings, rd.text(j, w, "settings"));
  KF_TRY_ASSIGN(device, rd.text(j, w, "device"));
  KF_TRY_ASSIGN(host, rd.str(j, w, "host"));
  KF_TRY_ASSIGN(started_at, rd.str(j, w, "started_at"));
  KF_TRY_ASSIGN(finished_at, rd.str_or_null(j, w, "finished_at"));
  s.id = id;
  s.tool_version = tool_version;
  s.git_revision = git_revision;
  s.command_line = command_line;
  s.settings_json = settings;
  s.device_json = device;
  s.host = host;
  s.started_at = started_at;
  s.finished_at = finished_at;
  return s;
}

Result<ResultRecord> read_result_fields(const Reader& rd, const json& j, const std::string& w);

/// A version 1 result: no counters.
Result<ResultRecord> read_result(const Reader& rd, const json& j, const std::string& w) {
  KF_TRY(rd.known(j, w, {"id", "sweep", "device", "template", "template_hash", "problem", "config", "status",
                         "reason", "median_ms", "p20_ms", "p80_ms", "min_ms", "max_ms", "count", "samples_ms",
                         "error_norm", "error_ratio", "compile_ms", "resources", "compile_log", "created_at"}));
  return read_result_fields(rd, j, w);
}

/// A version 2 result: its counters are read by read_counters.
Result<ResultRecord> read_result_v2(const Reader& rd, const json& j, const std::string& w) {
  KF_TRY(rd.known(j, w, {"id", "sweep", "device", "template", "template_hash", "problem", "config", "status",
                         "reason", "median_ms", "p20_ms", "p80_ms", "min_ms", "max_ms", "count", "samples_ms",
                         "error_norm", "error_ratio", "compile_ms", "resources", "compile_log", "created_at",
                         "counters"}));
  return read_result_fields(rd, j, w);
}

Result<ResultRecord> read_result_fields(const Reader& rd, const json& j, const std::string& w) {
  ResultRecord r;
  KF_TRY_ASSIGN(id, rd.integer(j, w, "id"));
  if (id <= 0) return rd.fail(w + "id", "expected a positive id, got " + std::to_string(id));
  r.id = id;
  KF_TRY_ASSIGN(sweep, rd.field(j, w, "sweep"));
  if (!sweep->is_null()) {
    KF_TRY_ASSIGN(sweep_id, rd.integer(j, w, "sweep"));
    r.sweep_id = sweep_id;
  }
  KF_TRY_ASSIGN(device, rd.str(j, w, "device", false));
  KF_TRY_ASSIGN(tname, rd.str(j, w, "template", false));
  KF_TRY_ASSIGN(thash, rd.str(j, w, "template_hash", false));
  KF_TRY_ASSIGN(problem, rd.str(j, w, "problem", false));
  KF_TRY_ASSIGN(config, rd.str(j, w, "config", false));
  KF_TRY_ASSIGN(status, rd.str(j, w, "status"));
  if (!is_status_word(status)) return rd.fail(w + "status", "not a status word: '" + status + "'");
  KF_TRY_ASSIGN(reason, rd.str(j, w, "reason"));
  r.device_key = device;
  r.template_name = tname;
  r.template_hash = thash;
  r.problem_key = problem;
  r.config = config;
  r.status = status;
  r.reason = reason;
  struct NumField {
    const char* name;
    double* out;
  };
  for (NumField f : {NumField{"median_ms", &r.median_ms}, NumField{"p20_ms", &r.p20_ms}, NumField{"p80_ms", &r.p80_ms},
                     NumField{"min_ms", &r.min_ms}, NumField{"max_ms", &r.max_ms},
                     NumField{"error_norm", &r.error_norm}, NumField{"error_ratio", &r.error_ratio},
                     NumField{"compile_ms", &r.compile_ms}}) {
    KF_TRY_ASSIGN(v, rd.num(j, w, f.name));
    *f.out = v;
  }
  KF_TRY_ASSIGN(count, rd.integer(j, w, "count"));
  r.count = count;
  KF_TRY_ASSIGN(samples, rd.text(j, w, "samples_ms"));
  KF_TRY_ASSIGN(resources, rd.text(j, w, "resources"));
  KF_TRY_ASSIGN(log, rd.str(j, w, "compile_log"));
  KF_TRY_ASSIGN(created_at, rd.str(j, w, "created_at"));
  r.samples_json = samples;
  r.resources_json = resources;
  r.compile_log = log;
  r.created_at = created_at;
  return r;
}

Result<WinnerRecord> read_winner(const Reader& rd, const json& j, const std::string& w) {
  KF_TRY(rd.known(j, w, {"device", "problem", "template", "template_hash", "config", "median_ms", "result_id"}));
  WinnerRecord x;
  KF_TRY_ASSIGN(device, rd.str(j, w, "device", false));
  KF_TRY_ASSIGN(problem, rd.str(j, w, "problem", false));
  KF_TRY_ASSIGN(tname, rd.str(j, w, "template", false));
  KF_TRY_ASSIGN(thash, rd.str(j, w, "template_hash", false));
  KF_TRY_ASSIGN(config, rd.str(j, w, "config", false));
  KF_TRY_ASSIGN(median, rd.num(j, w, "median_ms"));
  KF_TRY_ASSIGN(result_id, rd.integer(j, w, "result_id"));
  x.device_key = device;
  x.problem_key = problem;
  x.template_name = tname;
  x.template_hash = thash;
  x.config = config;
  x.median_ms = median;
  x.result_id = result_id;
  return x;
}

Result<CounterRecord> read_counter(const Reader& rd, const json& j, const std::string& w) {
  KF_TRY(rd.known(j, w, {"source", "collector", "name", "value", "unit", "note", "tool", "counters_version",
                         "created_at"}));
  CounterRecord c;
  KF_TRY_ASSIGN(source, rd.str(j, w, "source"));
  if (!is_counter_source(source))
    return rd.fail(w + "source", "'" + source + "' is not one of ncu, cupti, perf, rocprofiler, model, unavailable");
  KF_TRY_ASSIGN(collector, rd.str(j, w, "collector", false));
  KF_TRY_ASSIGN(name, rd.str(j, w, "name", false));
  KF_TRY_ASSIGN(value, rd.field(j, w, "value"));
  KF_TRY_ASSIGN(unit, rd.str(j, w, "unit"));
  KF_TRY_ASSIGN(note, rd.str(j, w, "note"));
  KF_TRY_ASSIGN(tool, rd.str(j, w, "tool"));
  KF_TRY_ASSIGN(version, rd.integer(j, w, "counters_version"));
  // The record holds an int: a larger version would be stored as another one.
  if (version < 1 || version > std::numeric_limits<int>::max()) {
    return rd.fail(w + "counters_version", "expected a positive version up to " +
                                               std::to_string(std::numeric_limits<int>::max()) + ", got " +
                                               std::to_string(version));
  }
  KF_TRY_ASSIGN(created_at, rd.str(j, w, "created_at"));
  if (source == "unavailable") {
    if (note.empty()) return rd.fail(w + "note", "an unavailable row needs a note saying why");
    if (!value->is_null()) return rd.fail(w + "value", "an unavailable row has no value, got " + json_excerpt(*value));
  } else {
    if (!value->is_number()) return rd.fail(w + "value", "expected a number, got " + json_excerpt(*value));
    c.value = value->get<double>();
  }
  c.source = source;
  c.collector = collector;
  c.name = name;
  c.unit = unit;
  c.note = note;
  c.tool = tool;
  c.counters_version = static_cast<int>(version);
  c.created_at = created_at;
  return c;
}

/// Reads results[i].counters of a version 2 document into `out`, keyed by
/// the result's id; a collector's name appears once per result.
Status read_counters(const Reader& rd, const json& doc, std::vector<CounterRecord>& out) {
  const json& results = doc["results"];
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::string w = at("results", i);
    KF_TRY_ASSIGN(list, rd.field(results[i], w, "counters"));
    if (!list->is_array()) return rd.fail(w + "counters", "expected an array, got " + json_excerpt(*list));
    std::set<std::pair<std::string, std::string>> seen;
    for (std::size_t k = 0; k < list->size(); ++k) {
      const std::string cw = w + "counters[" + std::to_string(k) + "].";
      if (!(*list)[k].is_object())
        return rd.fail(cw.substr(0, cw.size() - 1), "expected an object, got " + json_excerpt((*list)[k]));
      KF_TRY_ASSIGN(c, read_counter(rd, (*list)[k], cw));
      if (!seen.insert({c.collector, c.name}).second)
        return rd.fail(cw + "name", "'" + c.name + "' of collector '" + c.collector + "' appears twice");
      c.result_id = results[i]["id"].get<std::int64_t>();
      out.push_back(std::move(c));
    }
  }
  return ok_status();
}

/// Reads every element of the array `name` with `read`, into `out`.
template <typename T, typename F>
Status read_all(const Reader& rd, const json& doc, const char* name, std::vector<T>& out, F read) {
  KF_TRY_ASSIGN(arr, rd.array(doc, name));
  for (std::size_t i = 0; i < arr->size(); ++i) {
    KF_TRY_ASSIGN(obj, rd.object_at(*arr, name, i));
    KF_TRY_ASSIGN(rec, read(rd, *obj, at(name, i)));
    out.push_back(std::move(rec));
  }
  return ok_status();
}

}  // namespace

ojson to_interchange_json(const TuningSet& set, const std::string& exported_by) {
  ojson doc;
  doc["schema_version"] = kInterchangeSchemaVersion;
  doc["format"] = kFormat;
  doc["exported_by"] = exported_by;
  doc["source"] = std::filesystem::path(set.source).filename().string();
  doc["source_schema_version"] = set.source_schema_version;
  const auto& f = set.filter;
  doc["filters"] = {{"device", opt(f.device)}, {"op", opt(f.op)},           {"dtype", opt(f.dtype)},
                    {"layout", opt(f.layout)}, {"problem", opt(f.problem_key)}};
  doc["all_results"] = f.all_results;

  ojson devices = ojson::array();
  for (const auto& d : set.devices) {
    devices.push_back({{"key", d.key}, {"backend", d.backend}, {"vendor", d.vendor}, {"name", d.name},
                       {"arch", d.arch}, {"info", embed(d.info_json)}});
  }
  ojson templates = ojson::array();
  for (const auto& t : set.templates) {
    templates.push_back({{"name", t.name}, {"op", t.op}, {"hash", t.hash}, {"manifest", embed(t.manifest_json)}});
  }
  ojson problems = ojson::array();
  for (const auto& p : set.problems) {
    auto parsed = parse_ordered_json_bounded(p.dims_json, "problems.dims_json");
    ojson dims = parsed.ok() && parsed->is_object() ? std::move(parsed).value() : ojson::object();
    problems.push_back({{"key", p.key}, {"op", p.op}, {"dims", dims}, {"dtype", p.dtype}, {"layout", p.layout}});
  }
  ojson sweeps = ojson::array();
  for (const auto& s : set.sweeps) {
    sweeps.push_back({{"id", s.id},
                      {"tool_version", s.tool_version},
                      {"git_revision", s.git_revision},
                      {"command_line", s.command_line},
                      {"settings", embed(s.settings_json)},
                      {"device", embed(s.device_json)},
                      {"host", s.host},
                      {"started_at", s.started_at},
                      {"finished_at", s.finished_at.empty() ? ojson(nullptr) : ojson(s.finished_at)}});
  }
  ojson winners = ojson::array();
  for (const auto& w : set.winners) {
    winners.push_back({{"device", w.device_key},      {"problem", w.problem_key},
                       {"template", w.template_name}, {"template_hash", w.template_hash},
                       {"config", w.config},          {"median_ms", number(w.median_ms)},
                       {"result_id", w.result_id}});
  }
  ojson results = ojson::array();
  for (const auto& r : set.results) {
    ojson counters = ojson::array();
    for (const auto& c : set.counters_of(r.id)) counters.push_back(counter_json(c));
    results.push_back({{"id", r.id},
                       {"sweep", r.sweep_id ? ojson(r.sweep_id) : ojson(nullptr)},
                       {"device", r.device_key},
                       {"template", r.template_name},
                       {"template_hash", r.template_hash},
                       {"problem", r.problem_key},
                       {"config", r.config},
                       {"status", r.status},
                       {"reason", r.reason},
                       {"median_ms", number(r.median_ms)},
                       {"p20_ms", number(r.p20_ms)},
                       {"p80_ms", number(r.p80_ms)},
                       {"min_ms", number(r.min_ms)},
                       {"max_ms", number(r.max_ms)},
                       {"count", r.count},
                       {"samples_ms", embed(r.samples_json)},
                       {"error_norm", number(r.error_norm)},
                       {"error_ratio", number(r.error_ratio)},
                       {"compile_ms", number(r.compile_ms)},
                       {"resources", embed(r.resources_json)},
                       {"compile_log", r.compile_log},
                       {"created_at", r.created_at},
                       {"counters", std::move(counters)}});
  }
  doc["devices"] = std::move(devices);
  doc["templates"] = std::move(templates);
  doc["problems"] = std::move(problems);
  doc["sweeps"] = std::move(sweeps);
  doc["winners"] = std::move(winners);
  doc["results"] = std::move(results);
  return doc;
}

Result<TuningSet> parse_interchange_json(std::string_view text, const std::string& path) {
  Reader rd(path);
  KF_TRY_ASSIGN(doc, parse_json_bounded(text, path));
  if (!doc.is_object()) return Error::bad_input(path + ": expected a JSON object at the top level");
  KF_TRY_ASSIGN(version, rd.integer(doc, "", "schema_version"));
  if (version > kInterchangeSchemaVersion) {
    return rd.fail("schema_version", std::to_string(version) + " was written by a newer kforge (this one reads " +
                                         std::to_string(kInterchangeSchemaVersion) + "); upgrade kforge");
  }
  if (version < 1) return rd.fail("schema_version", "expected a positive version, got " + std::to_string(version));
  KF_TRY_ASSIGN(format, rd.str(doc, "", "format"));
  if (format != kFormat) return rd.fail("format", "expected '" + std::string(kFormat) + "', got '" + format + "'");
  KF_TRY(rd.known(doc, "", {"schema_version", "format", "exported_by", "source", "source_schema_version", "filters",
                            "all_results", "devices", "templates", "problems", "sweeps", "winners", "results"}));

  TuningSet set;
  set.source = path;
  set.source_schema_version = static_cast<int>(version);
  KF_TRY_ASSIGN(filters, rd.field(doc, "", "filters"));
  if (!filters->is_object()) return rd.fail("filters", "expected an object, got " + json_excerpt(*filters));
  KF_TRY(rd.known(*filters, "filters.", {"device", "op", "dtype", "layout", "problem"}));
  KF_TRY_ASSIGN(fdevice, rd.opt_str(*filters, "filters.", "device"));
  KF_TRY_ASSIGN(fop, rd.opt_str(*filters, "filters.", "op"));
  KF_TRY_ASSIGN(fdtype, rd.opt_str(*filters, "filters.", "dtype"));
  KF_TRY_ASSIGN(flayout, rd.opt_str(*filters, "filters.", "layout"));
  KF_TRY_ASSIGN(fproblem, rd.opt_str(*filters, "filters.", "problem"));
  KF_TRY_ASSIGN(all_results, rd.boolean(doc, "", "all_results"));
  set.filter.device = fdevice;
  set.filter.op = fop;
  set.filter.dtype = fdtype;
  set.filter.layout = flayout;
  set.filter.problem_key = fproblem;
  set.filter.all_results = all_results;

  KF_TRY(read_all(rd, doc, "devices", set.devices, read_device));
  KF_TRY(read_all(rd, doc, "templates", set.templates, read_template));
  KF_TRY(read_all(rd, doc, "problems", set.problems, read_problem));
  KF_TRY(read_all(rd, doc, "sweeps", set.sweeps, read_sweep));
  KF_TRY(read_all(rd, doc, "winners", set.winners, read_winner));
  if (version >= 2) {
    KF_TRY(read_all(rd, doc, "results", set.results, read_result_v2));
    KF_TRY(read_counters(rd, doc, set.counters));
    std::stable_sort(set.counters.begin(), set.counters.end(), ByResult{});
  } else {
    KF_TRY(read_all(rd, doc, "results", set.results, read_result));
  }

  // Fill the fields a database join would give, and check ids are unique.
  std::sort(set.results.begin(), set.results.end(),
            [](const ResultRecord& a, const ResultRecord& b) { return a.id < b.id; });
  for (std::size_t i = 1; i < set.results.size(); ++i) {
    if (set.results[i].id == set.results[i - 1].id) {
      return rd.fail("results", "id " + std::to_string(set.results[i].id) + " appears twice");
    }
  }
  for (auto& w : set.winners) {
    if (const ProblemRecord* p = set.problem(w.problem_key)) {
      w.op = p->op;
      w.dims_json = p->dims_json;
      w.dtype = p->dtype;
      w.layout = p->layout;
    }
  }
  return set;
}

}  // namespace kforge
