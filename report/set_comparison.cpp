// Matching two tuning sets and rendering the comparison as Markdown and JSON.
#include "report/set_comparison.hpp"

#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "core/hash.hpp"
#include "report/tuning_facts.hpp"

namespace kforge::report {

namespace {

using json = nlohmann::json;
using Key = std::pair<std::string, std::string>;  // device key, problem key

/// The fastest winner per (device, problem), and the number of results.
struct SideIndex {
  std::map<Key, const ResultRecord*> best;
  std::map<Key, std::size_t> evaluated;
};

SideIndex index_of(const TuningSet& s) {
  SideIndex ix;
  for (const auto& w : s.winners) {
    const ResultRecord* r = s.result(w.result_id);
    if (!r) continue;
    auto& slot = ix.best[{w.device_key, w.problem_key}];
    if (!slot || r->median_ms < slot->median_ms) slot = r;
  }
  for (const auto& r : s.results) ++ix.evaluated[{r.device_key, r.problem_key}];
  return ix;
}

std::string file_name(const std::string& p) { return std::filesystem::path(p).filename().string(); }

std::string md(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else out += c;
  }
  return out;
}

json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json side_json(const ComparisonSide& s) {
  if (!s.result) return {{"evaluated", s.evaluated}, {"winner", nullptr}};
  const auto& r = *s.result;
  return {{"evaluated", s.evaluated},
          {"winner",
           {{"template", r.template_name},
            {"template_hash", r.template_hash},
            {"config", r.config},
            {"median_ms", num(r.median_ms)},
            {"p20_ms", num(r.p20_ms)},
            {"p80_ms", num(r.p80_ms)},
            {"count", r.count}}}};
}

/// The counters that moved beside each time that moved (docs/profiling.md, "Moved counters").
std::string moved_counters_markdown(const Comparison& c) {
  std::ostringstream out;
  for (const auto& r : c.rows) {
    if ((r.verdict != "faster" && r.verdict != "slower") || r.moved_counters.empty()) continue;
    if (out.tellp() == 0) {
      out << "\n## Counters that moved\n\nBeside each time that moved, the winners' hardware counters that left "
             "their noise band (10% of a count, 5 points of a percentage), largest first.\n\n"
          << "| device | problem | verdict | same config | moved counters |\n|---|---|---|---|---|\n";
    }
    const bool same = r.base.result->template_name == r.neu.result->template_name &&
                      r.base.result->config == r.neu.result->config;
    out << "| " << md(r.device_name) << " | " << md(r.problem_key) << " | " << r.verdict << " | "
        << (same ? "yes" : "no") << " | " << md(moves_text(r.moved_counters, 4)) << " |\n";
  }
  return out.str();
}

json moves_json(const std::vector<CounterMove>& moves) {
  json out = json::array();
  for (const auto& m : moves)
    out.push_back({{"collector", m.collector}, {"name", m.name}, {"unit", m.unit}, {"before", num(m.before)},
                   {"after", num(m.after)}, {"change", num(m.change)}});
  return out;
}

}  // namespace

int Comparison::count(const std::string& verdict) const {
  int n = 0;
  for (const auto& r : rows) n += r.verdict == verdict ? 1 : 0;
  return n;
}

Comparison compare_sets(const TuningSet& base, const TuningSet& neu) {
  Comparison c;
  c.base_source = base.source;
  c.new_source = neu.source;
  const SideIndex b = index_of(base), n = index_of(neu);
  std::set<Key> keys;
  for (const auto& [k, v] : b.evaluated) keys.insert(k);
  for (const auto& [k, v] : n.evaluated) keys.insert(k);
  for (const auto& [k, v] : b.best) keys.insert(k);
  for (const auto& [k, v] : n.best) keys.insert(k);
  for (const auto& key : keys) {
    ComparisonRow row;
    row.device_key = key.first;
    row.problem_key = key.second;
    const DeviceRecord* d = base.device(key.first) ? base.device(key.first) : neu.device(key.first);
    const ProblemRecord* p = base.problem(key.second) ? base.problem(key.second) : neu.problem(key.second);
    if (d) {
      row.device_name = d->name;
      row.arch = d->arch;
    }
    if (p) {
      row.op = p->op;
      row.dtype = p->dtype;
      row.layout = p->layout;
    }
    auto find = [](const auto& m, const Key& k) {
      auto it = m.find(k);
      return it == m.end() ? decltype(it->second){} : it->second;
    };
    row.base = {find(b.best, key), find(b.evaluated, key)};
    row.neu = {find(n.best, key), find(n.evaluated, key)};
    if (row.base.result && row.neu.result) {
      const std::uint64_t seed = Hasher().add(key.first).add(key.second).value();
      row.timing = compare_timings(TimingDistribution::of(*row.base.result), TimingDistribution::of(*row.neu.result),
                                   seed);
      row.verdict = verdict_name(row.timing->verdict);
      row.moved_counters = moved_counters(base.counters_of(row.base.result->id), neu.counters_of(row.neu.result->id));
    } else if (row.base.result && row.neu.evaluated > 0) {
      row.verdict = "failed";
    } else if (row.base.result) {
      row.verdict = "only_base";
    } else if (row.neu.result) {
      row.verdict = "only_new";
    } else {
      continue;  // no winner on either side: nothing to compare
    }
    c.rows.push_back(std::move(row));
  }
  for (const auto& [side, set] : {std::pair{"base", &base}, std::pair{"new", &neu}}) {
    for (VendorComparison& v : with_library(compare_vendor(*set))) {
      const DeviceRecord* d = set->device(v.device_key);
      c.vendor.push_back({side, d ? d->name : v.device_key, std::move(v)});
    }
  }
  return c;
}

std::string render_comparison_markdown(const Comparison& c) {
  std::ostringstream out;
  out << "# kforge compare\n\n";
  out << "Base `" << file_name(c.base_source) << "`, new `" << file_name(c.new_source) << "`: "
      << c.rows.size() << " device/problem pair" << (c.rows.size() == 1 ? "" : "s") << ". ";
  out << "**" << c.count("slower") << " slower, " << c.count("failed") << " failed, " << c.count("faster")
      << " faster, " << c.count("same") << " same, " << c.count("only_base") << " only in base, "
      << c.count("only_new") << " only in new.**";
  out << (c.regressed() ? " Verdict: regressed.\n" : " Verdict: no regression.\n");
  out << "\nEach side's time is the median of its fastest winner. A change counts only when the 95% bootstrap "
         "interval of the ratio of medians excludes 1 and the ratio lies outside the runs' own noise band "
         "(the relative width p20–p80 of the noisier run); see docs/compare.md.\n\n";
  out << "| device | problem | base ms | new ms | new/base | 95% CI | noise ± | verdict | base config | new config |\n"
      << "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : c.rows) {
    auto ms = [](const ComparisonSide& s) { return s.result ? short_number(s.result->median_ms) : std::string("-"); };
    auto cfg = [](const ComparisonSide& s) {
      return s.result ? s.result->template_name + " " + s.result->config : std::string("-");
    };
    std::string ratio = "-", ci = "-", noise = "-";
    if (r.timing) {
      ratio = short_number(r.timing->ratio, 3);
      ci = r.timing->method == "bootstrap"
               ? "[" + short_number(r.timing->ci_low, 3) + ", " + short_number(r.timing->ci_high, 3) + "]"
               : "intervals";
      noise = short_number(r.timing->noise * 100, 2) + "%";
    }
    const std::string verdict = r.verdict == "slower" || r.verdict == "failed" ? "**" + r.verdict + "**" : r.verdict;
    out << "| " << md(r.device_name) << " | " << md(r.problem_key) << " | " << ms(r.base) << " | " << ms(r.neu)
        << " | " << ratio << " | " << ci << " | " << noise << " | " << verdict << " | " << md(cfg(r.base)) << " | "
        << md(cfg(r.neu)) << " |\n";
  }
  if (c.rows.empty()) out << "\nNothing to compare: neither side has a winner.\n";
  out << moved_counters_markdown(c);
  if (!c.vendor.empty()) {
    out << "\n## kforge against the vendor library\n\nPer set, kforge's best kernel and the best library "
           "call; "
           "ratio: kernel median / library median, above 1 the library is faster.\n\n"
        << "| set | device | problem | kforge best | ms | library best | ms | ratio | faster |\n"
        << "|---|---|---|---|---|---|---|---|---|\n";
    auto name = [](const ComparedEntry& e) {
      return e.template_name.empty() ? std::string("-") : e.template_name + " " + e.config;
    };
    auto ms = [](const ComparedEntry& e) {
      return e.template_name.empty() ? std::string("-") : short_number(e.median_ms);
    };
    for (const VendorRow& r : c.vendor) {
      const VendorComparison& v = r.versus;
      out << "| " << r.side << " | " << md(r.device_name) << " | " << md(v.problem_key) << " | "
          << md(name(v.kernel)) << " | " << ms(v.kernel) << " | " << md(name(v.library)) << " | "
          << ms(v.library) << " | " << (v.ratio > 0 ? short_number(v.ratio, 3) : "-") << " | "
          << (v.faster.empty() ? "-" : v.faster) << " |\n";
    }
  }
  return out.str();
}

json comparison_json(const Comparison& c) {
  json rows = json::array();
  for (const auto& r : c.rows) {
    json row = {{"device_key", r.device_key}, {"device", r.device_name}, {"arch", r.arch},
                {"problem", r.problem_key},   {"op", r.op},              {"dtype", r.dtype},
                {"layout", r.layout},         {"base", side_json(r.base)}, {"new", side_json(r.neu)},
                {"verdict", r.verdict}};
    if (r.timing) {
      row["ratio"] = num(r.timing->ratio);
      row["ci95"] = r.timing->method == "bootstrap" ? json::array({num(r.timing->ci_low), num(r.timing->ci_high)})
                                                     : json(nullptr);
      row["noise"] = num(r.timing->noise);
      row["method"] = r.timing->method;
      row["why"] = r.timing->why;
      row["moved_counters"] = moves_json(r.moved_counters);
    } else {
      row["ratio"] = nullptr;
      row["ci95"] = nullptr;
      row["noise"] = nullptr;
      row["method"] = nullptr;
      row["why"] = r.verdict == "failed" ? "new has results for this problem but none passed"
                                          : "tuned on one side only";
    }
    rows.push_back(std::move(row));
  }
  json summary = json::object();
  for (const char* v : {"slower", "failed", "faster", "same", "only_base", "only_new"}) summary[v] = c.count(v);
  json out = {{"base", file_name(c.base_source)},
              {"new", file_name(c.new_source)},
              {"regressed", c.regressed()},
              {"summary", summary},
              {"rows", rows}};
  if (!c.vendor.empty()) {
    json vendor = {{"base", json::array()}, {"new", json::array()}};
    for (const VendorRow& r : c.vendor) vendor[r.side].push_back(r.versus.to_json());
    out["vendor_comparison"] = std::move(vendor);
  }
  return out;
}

}  // namespace kforge::report
