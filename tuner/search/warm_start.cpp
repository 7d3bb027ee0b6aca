// Warm starts: nearby problems' winners, nearest first.
#include "tuner/search/warm_start.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/bounded_json.hpp"

namespace kforge {

Result<std::vector<WarmStart>> nearby_winners(Database& db, const std::string& device_key,
                                              const Problem& problem) {
  Database::WinnerFilter f;
  f.device_key = device_key;
  f.op = problem.op;
  f.dtype = std::string(dtype_name(problem.dtype));
  f.layout = problem.layout.name();
  KF_TRY_ASSIGN(winners, db.winners(f));
  const std::string key = problem.key();
  const std::string family = problem_family(key);
  std::vector<WarmStart> near;
  for (const auto& w : winners) {
    if (w.problem_key == key || problem_family(w.problem_key) != family) continue;
    std::map<std::string, std::int64_t> dims;
    try {
      dims = parse_json_bounded(w.dims_json, "problems.dims_json")
                 .value()
                 .get<std::map<std::string, std::int64_t>>();
    } catch (const std::exception&) {
      continue;  // a row this version cannot read suggests nothing
    }
    const double d = dims_log2_distance(problem.dims, dims);
    if (std::isinf(d)) continue;
    near.push_back({w.template_name, w.config, w.problem_key, d});
  }
  std::sort(near.begin(), near.end(), [](const WarmStart& a, const WarmStart& b) {
    return a.distance != b.distance ? a.distance < b.distance : a.from_problem < b.from_problem;
  });
  return near;
}

std::vector<std::pair<std::size_t, WarmStart>> warm_starts(const std::vector<WarmStart>& near,
                                                           const std::string& template_name,
                                                           const std::vector<Config>& space,
                                                           std::size_t first, int count) {
  std::vector<std::pair<std::size_t, WarmStart>> out;
  for (const auto& w : near) {
    if (static_cast<int>(out.size()) >= count) break;
    if (w.template_name != template_name) continue;
    auto cfg = Config::parse(w.config);
    if (!cfg.ok()) continue;
    const auto it = std::find(space.begin(), space.end(), *cfg);
    if (it == space.end()) continue;
    const auto index = static_cast<std::size_t>(it - space.begin());
    if (index == first ||
        std::any_of(out.begin(), out.end(), [&](const auto& o) { return o.first == index; }))
      continue;
    out.emplace_back(index, w);
  }
  return out;
}

}  // namespace kforge
