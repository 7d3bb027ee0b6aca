// regime_json, regime_text: the bound verdicts of a template version's winners.
#include "report/template_regime.hpp"

#include <algorithm>
#include <map>

#include "report/counter_summary.hpp"
#include "report/tuning_facts.hpp"

namespace kforge::report {

using ojson = nlohmann::ordered_json;

ojson regime_json(const TuningSet& set, const std::vector<const ResultRecord*>& winners,
                  const std::vector<DeviceCeilings>& ceilings) {
  std::map<std::pair<std::string, std::string>, const ResultRecord*> fastest;
  for (const ResultRecord* r : winners) {
    auto& slot = fastest[{r->device_key, r->problem_key}];
    if (!slot || r->median_ms < slot->median_ms) slot = r;
  }
  ojson out = ojson::array();
  for (const auto& [key, r] : fastest) {
    const DeviceRecord* d = set.device(key.first);
    const ProblemRecord* p = set.problem(key.second);
    if (!d || !p) continue;
    const auto rows = with_model_rows(set.counters_of(r->id), *p, r->median_ms);
    const BoundVerdict v = verdict_for(r->median_ms, rows, find_ceilings(*d, ceilings, set.measured_ceilings), p->dtype);
    out.push_back({{"device", d->name},
                   {"problem", p->key},
                   {"config", r->config},
                   {"bound", bound_name(v.bound)},
                   {"first", v.first},
                   {"first_name", v.first_name},
                   {"text", v.text},
                   {"from_model", v.from_model}});
  }
  return out;
}

std::string regime_text(const ojson& regime) {
  struct Group {
    int n = 0, from_model = 0;
    double lo = 0, hi = 0;
    std::string what;
  };
  std::map<std::string, Group> groups;
  int known = 0;
  for (const auto& e : regime) {
    const std::string bound = e["bound"].get<std::string>();
    if (bound == "unknown") continue;
    ++known;
    Group& g = groups[bound];
    const double x = e["first"].get<double>();
    g.lo = g.n ? std::min(g.lo, x) : x;
    g.hi = g.n ? std::max(g.hi, x) : x;
    g.what = e["first_name"].get<std::string>();
    g.from_model += e["from_model"].get<bool>() ? 1 : 0;
    ++g.n;
  }
  std::vector<std::pair<std::string, Group>> order(groups.begin(), groups.end());
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second.n > b.second.n; });
  std::string out;
  for (const auto& [bound, g] : order) {
    if (!out.empty()) out += "; ";
    out += bound + " on " + std::to_string(g.n) + " of " + std::to_string(known) + " winner" + (known == 1 ? "" : "s");
    out += " (" + short_number(g.lo, 2) + (g.hi > g.lo ? "-" + short_number(g.hi, 2) : "") + " " + g.what;
    if (g.from_model == g.n) out += ", from the model";
    out += ")";
  }
  return out;
}

}  // namespace kforge::report
