// Enumerates the valid configurations of a template for one problem and device
// without materializing the cartesian product: parameters are bound one at a
// time in declared order, and each constraint is tested as soon as every
// parameter it reads is bound, pruning the whole subtree below a failure.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "config.hpp"
#include "device_limits.hpp"
#include "manifest.hpp"
#include "operator.hpp"
#include "problem.hpp"
#include "result.hpp"

namespace kforge {

struct EnumerationStats {
  std::uint64_t nodes = 0;   ///< partial or full assignments visited
  std::uint64_t valid = 0;   ///< configurations that passed every constraint
};

class SearchSpace {
 public:
  SearchSpace(const TemplateManifest& manifest, const Operator& op, const Problem& problem,
              const DeviceLimits& limits);

  /// Calls visit for each valid configuration in lexicographic order of the
  /// declared parameter order and value order; stops early when visit returns
  /// false. Errors (naming the field) when a constraint cannot be evaluated.
  Result<EnumerationStats> for_each(const std::function<bool(const Config&)>& visit) const;
  /// All valid configurations (only these are stored).
  Result<std::vector<Config>> enumerate() const;
  /// Declared values and every constraint hold for `c`.
  Result<bool> is_valid(const Config& c) const;
  /// Product of the number of declared values of every parameter.
  std::uint64_t cartesian_size() const;
  /// The expression environment for a configuration (problem, device, config).
  Env env_for(const Config& c) const;

 private:
  const TemplateManifest& manifest_;
  const Operator& op_;
  Problem problem_;
  DeviceLimits limits_;
};

}  // namespace kforge
