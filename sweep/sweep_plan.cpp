// Sweep plan parsing, expansion and sharding.
#include "sweep/sweep_plan.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/bounded_json.hpp"
#include "generator/operator.hpp"
#include "tuner/search/strategy.hpp"
#include "tuner/search/strategy_default.hpp"

namespace kforge {

namespace {

using nlohmann::json;

std::string join(const std::vector<std::string>& xs) {
  std::string s;
  for (const auto& x : xs) s += (s.empty() ? "" : ", ") + x;
  return s;
}

/// Builds the one-line errors: "FILE: PATH: message".
struct Reporter {
  const std::string& file;
  Error at(const std::string& path, const std::string& message) const {
    return Error::bad_input(file + ": " + (path.empty() ? "" : path + ": ") + message);
  }
  Error unknown_key(const std::string& path, const std::string& key, const std::vector<std::string>& known) const {
    return at(path.empty() ? key : path + "." + key, "unknown key (known: " + join(known) + ")");
  }
};

std::string index_path(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }
std::string key_path(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

Status check_keys(const Reporter& r, const std::string& path, const json& obj, const std::vector<std::string>& known) {
  for (const auto& [key, value] : obj.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) return r.unknown_key(path, key, known);
  }
  return ok_status();
}

Result<std::int64_t> integer_at_least(const Reporter& r, const std::string& path, const json& v, std::int64_t min,
                                      std::int64_t max = std::numeric_limits<std::int32_t>::max()) {
  if (!v.is_number_integer()) return r.at(path, json_excerpt(v) + " is not an integer");
  // Unsigned values above INT64_MAX read as negative through get<int64_t>.
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
    return r.at(path, json_excerpt(v) + " is larger than " + std::to_string(max));
  }
  const auto x = v.get<std::int64_t>();
  if (x < min) return r.at(path, json_excerpt(v) + " is less than " + std::to_string(min));
  if (x > max) return r.at(path, json_excerpt(v) + " is larger than " + std::to_string(max));
  return x;
}

const std::vector<std::string> kBudgetKeys = {"strategy", "max_evals", "time_budget_s", "no_improvement",
                                              "seed",     "min_reps",  "max_reps",      "warm_start"};

/// Applies the fields of a `budget` object over `b`.
Status read_budget(const Reporter& r, const std::string& path, const json& j, SweepBudget& b) {
  if (!j.is_object()) return r.at(path, json_excerpt(j) + " is not an object");
  KF_TRY(check_keys(r, path, j, kBudgetKeys));
  if (j.contains("strategy")) {
    const json& v = j["strategy"];
    const auto names = strategy_names();
    if (!v.is_string() || std::find(names.begin(), names.end(), v.get<std::string>()) == names.end()) {
      return r.at(key_path(path, "strategy"), "unknown strategy " + json_excerpt(v) + " (known: " + join(names) + ")");
    }
    b.strategy = v.get<std::string>();
  }
  auto int_field = [&](const char* key, int& out, std::int64_t min) -> Status {
    if (!j.contains(key)) return ok_status();
    KF_TRY_ASSIGN(x, integer_at_least(r, key_path(path, key), j[key], min));
    out = static_cast<int>(x);
    return ok_status();
  };
  KF_TRY(int_field("max_evals", b.max_evals, 0));
  KF_TRY(int_field("no_improvement", b.no_improvement, 0));
  KF_TRY(int_field("min_reps", b.min_reps, 1));
  KF_TRY(int_field("max_reps", b.max_reps, 1));
  KF_TRY(int_field("warm_start", b.warm_start, 0));
  if (j.contains("time_budget_s")) {
    const json& v = j["time_budget_s"];
    if (!v.is_number() || v.get<double>() < 0) {
      return r.at(key_path(path, "time_budget_s"), json_excerpt(v) + " is not a number of seconds >= 0");
    }
    b.time_budget_s = v.get<double>();
  }
  if (j.contains("seed")) {
    const json& v = j["seed"];
    if (!v.is_number_unsigned()) return r.at(key_path(path, "seed"), json_excerpt(v) + " is not an integer >= 0");
    b.seed = v.get<std::uint64_t>();
  }
  if (b.max_reps < b.min_reps) {
    return r.at(key_path(path, j.contains("max_reps") ? "max_reps" : "min_reps"),
                "max_reps " + std::to_string(b.max_reps) + " is less than min_reps " + std::to_string(b.min_reps));
  }
  return ok_status();
}

/// A list field: an array of strings or objects; a lone value stands for a list of one.
std::vector<json> as_list(const json& v) {
  if (v.is_array()) return std::vector<json>(v.begin(), v.end());
  return {v};
}

Result<std::map<std::string, std::int64_t>> read_shape(const Reporter& r, const std::string& path, const json& v) {
  if (v.is_string()) {
    auto dims = parse_dims(v.get<std::string>());
    if (!dims.ok()) return r.at(path, dims.error().message);
    return std::move(dims).value();
  }
  if (v.is_object()) {
    std::map<std::string, std::int64_t> dims;
    for (const auto& [name, x] : v.items()) {
      if (!x.is_number_integer() || x.get<std::int64_t>() <= 0) {
        return r.at(key_path(path, name), json_excerpt(x) + " is not a positive integer");
      }
      dims[name] = x.get<std::int64_t>();
    }
    if (dims.empty()) return r.at(path, "{} names no dimension");
    return dims;
  }
  return r.at(path, json_excerpt(v) + " is not a shape (\"M=64,N=64,K=64\" or {\"M\": 64, ...})");
}

Result<std::map<std::string, std::string>> read_attrs(const Reporter& r, const std::string& path, const json& v) {
  if (v.is_string()) {
    auto attrs = parse_attrs(v.get<std::string>());
    if (!attrs.ok()) return r.at(path, attrs.error().message);
    return std::move(attrs).value();
  }
  if (v.is_object()) {
    std::string text;
    for (const auto& [name, x] : v.items()) {
      if (!x.is_string()) return r.at(key_path(path, name), json_excerpt(x) + " is not a string");
      text += (text.empty() ? "" : ",") + name + "=" + x.get<std::string>();
    }
    auto attrs = parse_attrs(text);
    if (!attrs.ok()) return r.at(path, json_excerpt(v) + ": " + attrs.error().message);
    return std::move(attrs).value();
  }
  return r.at(path, json_excerpt(v) + " is not attributes (\"kind=max\" or {\"kind\": \"max\"})");
}

/// A value of an entry's list field with its JSON path.
template <typename T>
struct Item {
  T value;
  std::string path;
};

/// Reads an optional list field; `fallback` (with the entry's path) when absent.
template <typename T, typename ReadOne>
Result<std::vector<Item<T>>> read_list(const Reporter& r, const std::string& entry, const json& e, const char* key,
                                       std::optional<T> fallback, ReadOne read_one) {
  std::vector<Item<T>> out;
  const std::string path = key_path(entry, key);
  if (!e.contains(key)) {
    if (!fallback) return r.at(path, "missing");
    out.push_back({*fallback, entry});
    return out;
  }
  const json& v = e[key];
  if (v.is_array() && v.empty()) return r.at(path, "[] is empty");
  const auto items = as_list(v);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string p = v.is_array() ? index_path(path, i) : path;
    KF_TRY_ASSIGN(x, read_one(p, items[i]));
    out.push_back({std::move(x), p});
  }
  return out;
}

const std::vector<std::string> kPlanKeys = {"schema_version", "name", "description", "budget", "entries"};
const std::vector<std::string> kEntryKeys = {"op", "shapes", "dtypes", "layouts", "epilogues", "attrs", "budget"};

/// Normalizes a problem; the operator's message follows `path` and the value.
Result<Problem> normalized(const Reporter& r, const Operator& op, const Problem& p, const std::string& path,
                           const std::string& value) {
  auto n = op.normalize(p);
  if (!n.ok()) return r.at(path, value + ": " + n.error().message);
  return std::move(n).value();
}

Status expand_entry(const Reporter& r, const std::string& path, const json& e, const SweepBudget& plan_budget,
                    SweepPlan& plan, std::map<std::string, std::string>& planned_by) {
  if (!e.is_object()) return r.at(path, json_excerpt(e) + " is not an object");
  KF_TRY(check_keys(r, path, e, kEntryKeys));
  if (!e.contains("op")) return r.at(key_path(path, "op"), "missing");
  const json& op_json = e["op"];
  const Operator* op = op_json.is_string() ? find_operator(op_json.get<std::string>()) : nullptr;
  if (!op) {
    std::vector<std::string> known;
    for (const auto* x : all_operators()) known.emplace_back(x->name());
    return r.at(key_path(path, "op"), "unknown operator " + json_excerpt(op_json) + " (known: " + join(known) + ")");
  }
  SweepBudget budget = plan_budget;
  if (e.contains("budget")) KF_TRY(read_budget(r, key_path(path, "budget"), e["budget"], budget));

  KF_TRY_ASSIGN(shapes, (read_list<std::map<std::string, std::int64_t>>(
                            r, path, e, "shapes", std::nullopt,
                            [&](const std::string& p, const json& v) { return read_shape(r, p, v); })));
  KF_TRY_ASSIGN(dtypes, (read_list<Dtype>(r, path, e, "dtypes", Dtype::kF32,
                                          [&](const std::string& p, const json& v) -> Result<Dtype> {
                                            auto d = v.is_string() ? parse_dtype(v.get<std::string>()) : std::nullopt;
                                            if (!d) return r.at(p, "unknown dtype " + json_excerpt(v) + " (f32, f16, bf16)");
                                            return *d;
                                          })));
  KF_TRY_ASSIGN(layouts, (read_list<Layout>(r, path, e, "layouts", Layout{},
                                            [&](const std::string& p, const json& v) -> Result<Layout> {
                                              auto l = v.is_string() ? parse_layout(v.get<std::string>()) : std::nullopt;
                                              if (!l) return r.at(p, "unknown layout " + json_excerpt(v) + " (NN, NT, TN, TT)");
                                              return *l;
                                            })));
  KF_TRY_ASSIGN(epilogues, (read_list<Epilogue>(r, path, e, "epilogues", Epilogue{},
                                                [&](const std::string& p, const json& v) -> Result<Epilogue> {
                                                  if (!v.is_string()) return r.at(p, json_excerpt(v) + " is not a string");
                                                  auto ep = parse_epilogue(v.get<std::string>());
                                                  if (!ep.ok()) return r.at(p, ep.error().message);
                                                  return *ep;
                                                })));
  KF_TRY_ASSIGN(attrs, (read_list<std::map<std::string, std::string>>(
                           r, path, e, "attrs", std::map<std::string, std::string>{},
                           [&](const std::string& p, const json& v) { return read_attrs(r, p, v); })));

  // Each value on its own first (with the first shape), so that an error
  // names the field at fault; then every combination.
  Problem base;
  base.op = std::string(op->name());
  const json& shapes_json = e["shapes"];
  auto shown = [&](const json& list, std::size_t i) { return json_excerpt(list.is_array() ? list[i] : list); };
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    Problem p = base;
    p.dims = shapes[i].value;
    KF_TRY(normalized(r, *op, p, shapes[i].path, shown(shapes_json, i)));
  }
  base.dims = shapes[0].value;
  auto check_one = [&](const auto& items, const char* key, auto set) -> Status {
    for (std::size_t i = 0; i < items.size(); ++i) {
      Problem p = base;
      set(p, items[i].value);
      KF_TRY(normalized(r, *op, p, items[i].path, e.contains(key) ? shown(e[key], i) : "default"));
    }
    return ok_status();
  };
  KF_TRY(check_one(layouts, "layouts", [](Problem& p, const Layout& l) { p.layout = l; }));
  KF_TRY(check_one(epilogues, "epilogues", [](Problem& p, const Epilogue& x) { p.epilogue = x; }));
  KF_TRY(check_one(attrs, "attrs", [](Problem& p, const std::map<std::string, std::string>& a) { p.attrs = a; }));

  for (const auto& s : shapes) {
    for (const auto& d : dtypes) {
      for (const auto& l : layouts) {
        for (const auto& ep : epilogues) {
          for (const auto& a : attrs) {
            Problem p = base;
            p.dims = s.value;
            p.dtype = d.value;
            p.layout = l.value;
            p.epilogue = ep.value;
            p.attrs = a.value;
            auto n = op->normalize(p);
            if (!n.ok()) {
              return r.at(path, "the combination " + s.path + ", " + d.path + ", " + l.path + ", " + ep.path +
                                    ", " + a.path + ": " + n.error().message);
            }
            SweepTask t;
            t.index = plan.tasks.size();
            t.key = n->key();
            t.problem = std::move(n).value();
            t.budget = budget;
            t.entry = path;
            t.dtype_path = d.path;
            t.layout_path = l.path;
            auto [it, fresh] = planned_by.emplace(t.key, path);
            if (!fresh) return r.at(path, "problem " + t.key + " is planned twice (also by " + it->second + ")");
            plan.tasks.push_back(std::move(t));
          }
        }
      }
    }
  }
  return ok_status();
}

}  // namespace

Result<SweepPlan> parse_sweep_plan(std::string_view text, const std::string& file) {
  const Reporter r{file};
  KF_TRY_ASSIGN(root, parse_json_bounded(text, file));
  if (!root.is_object()) return r.at("", "a sweep plan is a JSON object, got " + json_excerpt(root));
  KF_TRY(check_keys(r, "", root, kPlanKeys));
  if (!root.contains("schema_version")) return r.at("schema_version", "missing (this kforge reads 1)");
  const json& version = root["schema_version"];
  if (!version.is_number_integer() || version.get<std::int64_t>() < 1) {
    return r.at("schema_version", json_excerpt(version) + " is not a version (this kforge reads 1)");
  }
  if (version.get<std::int64_t>() > kSweepPlanVersion) {
    return r.at("schema_version", json_excerpt(version) + " was written by a newer kforge (this one reads " +
                                      std::to_string(kSweepPlanVersion) + ")");
  }
  SweepPlan plan;
  plan.file = file;
  for (const char* key : {"name", "description"}) {
    if (root.contains(key) && !root[key].is_string()) return r.at(key, json_excerpt(root[key]) + " is not a string");
  }
  if (root.contains("name")) plan.name = root["name"].get<std::string>();
  if (root.contains("budget")) KF_TRY(read_budget(r, "budget", root["budget"], plan.budget));
  if (!root.contains("entries")) return r.at("entries", "missing");
  const json& entries = root["entries"];
  if (!entries.is_array()) return r.at("entries", json_excerpt(entries) + " is not an array");
  if (entries.empty()) return r.at("entries", "[] plans nothing");
  std::map<std::string, std::string> planned_by;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    KF_TRY(expand_entry(r, index_path("entries", i), entries[i], plan.budget, plan, planned_by));
  }
  return plan;
}

Result<SweepPlan> load_sweep_plan(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::bad_input(path + ": cannot read the sweep plan (missing or unreadable)");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_sweep_plan(ss.str(), path);
}

Result<SweepShard> parse_shard(std::string_view text) {
  auto bad = [&] {
    return Error::bad_input("--shard: '" + std::string(text) + "' is not I/N with 1 <= I <= N (e.g. 2/4)");
  };
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) return bad();
  SweepShard s;
  auto num = [](std::string_view part, int& out) {
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    return ec == std::errc{} && end == part.data() + part.size() && !part.empty();
  };
  if (!num(text.substr(0, slash), s.index) || !num(text.substr(slash + 1), s.count)) return bad();
  if (s.count < 1 || s.index < 1 || s.index > s.count) return bad();
  return s;
}

bool in_shard(const SweepTask& task, SweepShard shard) {
  return static_cast<int>(task.index % static_cast<std::size_t>(shard.count)) + 1 == shard.index;
}

std::vector<SweepTask> shard_tasks(const SweepPlan& plan, SweepShard shard) {
  std::vector<SweepTask> out;
  for (const auto& t : plan.tasks) {
    if (in_shard(t, shard)) out.push_back(t);
  }
  return out;
}

std::string SweepBudget::strategy_to_run() const {
  return strategy.empty() ? default_strategy(max_evals) : strategy;
}

}  // namespace kforge
