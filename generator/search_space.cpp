// Depth-first enumeration of valid configurations with constraint pruning.
//
// Each constraint and envelope expression is attached to the depth of the last
// parameter (in declared order) it reads and tested as soon as that parameter
// is bound; expressions that read no parameter are tested once before binding
// anything (when one fails, the space is empty). A problem whose dtype or
// layout the template does not declare has an empty space.
#include "generator/search_space.hpp"

#include <algorithm>
#include <limits>

namespace kforge {

namespace {

struct Plan {
  std::vector<const FieldExpr*> unbound;                ///< read no parameter
  std::vector<std::vector<const FieldExpr*>> at_depth;  ///< index = last parameter read
};

Plan make_plan(const TemplateManifest& m) {
  Plan plan;
  plan.at_depth.resize(m.parameters.size());
  auto attach = [&](const FieldExpr& fe) {
    std::ptrdiff_t last = -1;
    for (std::size_t i = 0; i < m.parameters.size(); ++i) {
      const auto& names = fe.expr.names();
      if (std::binary_search(names.begin(), names.end(), m.parameters[i].name)) {
        last = static_cast<std::ptrdiff_t>(i);
      }
    }
    if (last < 0) {
      plan.unbound.push_back(&fe);
    } else {
      plan.at_depth[static_cast<std::size_t>(last)].push_back(&fe);
    }
  };
  for (const auto& fe : m.constraints) attach(fe);
  for (const auto& fe : m.envelope) attach(fe);
  return plan;
}

/// Evaluates checks in order; false at the first that fails.
Result<bool> all_hold(const std::vector<const FieldExpr*>& checks, const Env& env, const TemplateManifest& m,
                      const Config& bound, const Problem& problem) {
  for (const FieldExpr* fe : checks) {
    auto v = fe->expr.eval(env);
    if (!v) {
      return Error::bad_input(m.path + ": " + fe->field + ": " + v.error().message + " (configuration " +
                              bound.canonical_name() + " on " + problem.key() + ")");
    }
    if (*v == 0) return false;
  }
  return true;
}

class Walker {
 public:
  Walker(const TemplateManifest& m, const Plan& plan, Env env, const Problem& problem,
         const std::function<bool(const Config&)>& visit, std::uint64_t max_nodes)
      : m_(m), plan_(plan), env_(std::move(env)), problem_(problem), visit_(visit), max_nodes_(max_nodes) {
    for (const auto& p : m_.parameters) slots_.push_back(&(env_[p.name] = 0));
  }

  Result<EnumerationStats> run() {
    KF_TRY_ASSIGN(open, all_hold(plan_.unbound, env_, m_, bound_, problem_));
    if (open) {
      KF_TRY_ASSIGN(finished, walk(0));
      stats_.complete = finished;
    }
    return stats_;
  }

 private:
  /// Binds parameter `depth` to each of its values in turn; false once visit asks to stop.
  Result<bool> walk(std::size_t depth) {
    if (depth == m_.parameters.size()) {
      ++stats_.valid;
      return visit_(bound_);
    }
    const Parameter& p = m_.parameters[depth];
    for (std::int64_t v : p.values) {
      if (stats_.nodes == max_nodes_) return false;
      ++stats_.nodes;
      *slots_[depth] = v;
      bound_.values[p.name] = v;
      KF_TRY_ASSIGN(holds, all_hold(plan_.at_depth[depth], env_, m_, bound_, problem_));
      if (!holds) continue;
      KF_TRY_ASSIGN(more, walk(depth + 1));
      if (!more) return false;
    }
    bound_.values.erase(p.name);
    return true;
  }

  const TemplateManifest& m_;
  const Plan& plan_;
  Env env_;
  const Problem& problem_;
  const std::function<bool(const Config&)>& visit_;
  std::uint64_t max_nodes_;
  std::vector<std::int64_t*> slots_;  ///< env_ entries of each parameter, in declared order
  Config bound_;                      ///< parameters bound so far
  EnumerationStats stats_;
};

}  // namespace

SearchSpace::SearchSpace(const TemplateManifest& manifest, const Operator& op, const Problem& problem,
                         const DeviceLimits& limits)
    : manifest_(manifest), op_(op), problem_(problem), limits_(limits) {
  // Normalized when possible (batch = 1 filled in); for_each reports a bad problem.
  auto normalized = op_.normalize(problem);
  if (normalized) problem_ = std::move(normalized).value();
}

Result<EnumerationStats> SearchSpace::for_each(const std::function<bool(const Config&)>& visit,
                                               std::uint64_t max_nodes) const {
  KF_TRY_ASSIGN(problem, op_.normalize(problem_));
  if (manifest_.op != op_.name()) {
    return Error::bad_input(manifest_.path + ": template " + manifest_.name + " implements " + manifest_.op +
                            ", not " + std::string(op_.name()));
  }
  if (!manifest_.supports(problem.dtype) || !manifest_.supports(problem.layout)) {
    return EnumerationStats{};
  }
  const Plan plan = make_plan(manifest_);
  Walker walker(manifest_, plan, env_for(Config{}), problem, visit, max_nodes);
  return walker.run();
}

Result<const FieldExpr*> SearchSpace::failed_problem_check() const {
  KF_TRY_ASSIGN(problem, op_.normalize(problem_));
  const Env env = env_for(Config{});
  for (const FieldExpr* fe : make_plan(manifest_).unbound) {
    KF_TRY_ASSIGN(holds, all_hold({fe}, env, manifest_, Config{}, problem));
    if (!holds) return fe;
  }
  return static_cast<const FieldExpr*>(nullptr);
}

Result<std::vector<Config>> SearchSpace::enumerate() const {
  std::vector<Config> out;
  KF_TRY(for_each([&](const Config& c) {
    out.push_back(c);
    return true;
  }));
  return out;
}

Result<EnumerationStats> SearchSpace::count_at_most(std::uint64_t max_valid, std::uint64_t max_nodes) const {
  // Stops at the one past max_valid, so that exactly max_valid is complete.
  return for_each([&, seen = std::uint64_t{0}](const Config&) mutable { return ++seen <= max_valid; }, max_nodes);
}

Result<Config> SearchSpace::sample(const UniformBelow& below, std::uint64_t max_tries) const {
  Config c;
  for (std::uint64_t t = 0; t < max_tries; ++t) {
    for (const auto& p : manifest_.parameters) {
      c.values[p.name] = p.values[static_cast<std::size_t>(below(p.values.size()))];
    }
    KF_TRY_ASSIGN(valid, is_valid(c));
    if (valid) return c;
  }
  return Error::bad_input(manifest_.path + ": template " + manifest_.name + ": the constraints rejected all " +
                          std::to_string(max_tries) + " configurations drawn uniformly from its cartesian space on " +
                          problem_.key() + "; too few are valid to sample");
}

Result<std::vector<Config>> SearchSpace::neighbors(const Config& c) const {
  std::vector<Config> out;
  for (const auto& p : manifest_.parameters) {
    const auto at = c.values.find(p.name);
    if (at == c.values.end()) continue;
    for (std::int64_t v : p.values) {
      if (v == at->second) continue;
      Config n = c;
      n.values[p.name] = v;
      KF_TRY_ASSIGN(valid, is_valid(n));
      if (valid) out.push_back(std::move(n));
    }
  }
  return out;
}

Result<bool> SearchSpace::is_valid(const Config& c) const {
  KF_TRY_ASSIGN(problem, op_.normalize(problem_));
  if (!manifest_.check_declared(c)) return false;
  if (!manifest_.supports(problem.dtype) || !manifest_.supports(problem.layout)) return false;
  // Same checks in the same order as enumeration, so both agree on errors too.
  const Plan plan = make_plan(manifest_);
  const Env env = env_for(c);
  KF_TRY_ASSIGN(open, all_hold(plan.unbound, env, manifest_, c, problem));
  if (!open) return false;
  for (const auto& checks : plan.at_depth) {
    KF_TRY_ASSIGN(holds, all_hold(checks, env, manifest_, c, problem));
    if (!holds) return false;
  }
  return true;
}

std::uint64_t SearchSpace::cartesian_size() const {
  std::uint64_t n = 1;
  for (const auto& p : manifest_.parameters) {
    if (__builtin_mul_overflow(n, static_cast<std::uint64_t>(p.values.size()), &n)) {
      return std::numeric_limits<std::uint64_t>::max();
    }
  }
  return n;
}

Env SearchSpace::env_for(const Config& c) const {
  Env env;
  limits_.add_to(env);
  op_.add_to(env, problem_);
  for (const auto& [name, value] : c.values) env[name] = value;
  return env;
}

}  // namespace kforge
