// Enumerates the valid configurations of a template for one problem and device
// without materializing the cartesian product: parameters are bound one at a
// time in declared order, and each constraint is tested as soon as every
// parameter it reads is bound, pruning the whole subtree below a failure.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/result.hpp"
#include "generator/config.hpp"
#include "generator/device_limits.hpp"
#include "generator/manifest.hpp"
#include "generator/operator.hpp"
#include "generator/problem.hpp"

namespace kforge {

struct EnumerationStats {
  std::uint64_t nodes = 0;   ///< partial or full assignments visited
  std::uint64_t valid = 0;   ///< configurations that passed every constraint
  bool complete = true;      ///< the walk reached the end (visit never stopped it, no node limit hit)
};

/// A uniform draw in [0, n), n > 0: the caller's seeded generator.
using UniformBelow = std::function<std::uint64_t(std::uint64_t)>;

class SearchSpace {
 public:
  SearchSpace(const TemplateManifest& manifest, const Operator& op, const Problem& problem,
              const DeviceLimits& limits);

  /// Calls visit for each valid configuration in lexicographic order of the
  /// declared parameter order and value order; stops early when visit returns
  /// false. Errors (naming the field) when a constraint cannot be evaluated.
  /// A walk that has visited `max_nodes` partial or full assignments stops
  /// there, incomplete: a space too large to walk is found without walking it.
  Result<EnumerationStats> for_each(const std::function<bool(const Config&)>& visit,
                                    std::uint64_t max_nodes = UINT64_MAX) const;
  /// All valid configurations (only these are stored).
  Result<std::vector<Config>> enumerate() const;
  /// Counts valid configurations, storing none, visiting at most `max_nodes`
  /// and stopping past `max_valid`: `complete` says the count is exact (and
  /// at most `max_valid`).
  Result<EnumerationStats> count_at_most(std::uint64_t max_valid, std::uint64_t max_nodes) const;
  /// A valid configuration drawn uniformly: each parameter's value drawn
  /// uniformly from its declared values, redrawn while a constraint rejects it
  /// (rejection sampling), at most `max_tries` draws; an error naming the
  /// template and the number of draws when every one was rejected.
  Result<Config> sample(const UniformBelow& below, std::uint64_t max_tries) const;
  /// The valid configurations that differ from `c` in exactly one parameter,
  /// in declared parameter order, then declared value order.
  Result<std::vector<Config>> neighbors(const Config& c) const;
  /// Declared values and every constraint hold for `c`.
  Result<bool> is_valid(const Config& c) const;
  /// The first constraint or envelope expression that reads no parameter
  /// and fails for this problem on this device (then no configuration is
  /// valid); nullptr when each holds.
  Result<const FieldExpr*> failed_problem_check() const;
  /// Product of the number of declared values of every parameter; 2^64 - 1
  /// where it overflows (cartesian_size.hpp gives it exactly).
  std::uint64_t cartesian_size() const;
  /// The expression environment for a configuration (problem, device, config).
  Env env_for(const Config& c) const;
  const TemplateManifest& manifest() const { return manifest_; }
  const Problem& problem() const { return problem_; }

 private:
  const TemplateManifest& manifest_;
  const Operator& op_;
  Problem problem_;
  DeviceLimits limits_;
};

}  // namespace kforge
