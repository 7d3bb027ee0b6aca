// Warm starts (TuneRequest::warm_start): the winners of nearby problems of
// the same family, proposed right after a template's default.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "core/result.hpp"
#include "db/database.hpp"
#include "generator/config.hpp"
#include "generator/problem.hpp"

namespace kforge {

/// A configuration proposed right after the default because it won a
/// nearby problem.
struct WarmStart {
  std::string template_name;
  std::string config;
  std::string from_problem;  ///< the problem key it won
  double distance = 0;       ///< dims_log2_distance to this problem
};

/// The winners stored on device `device_key` for other problems of
/// `problem`'s family, every template's, nearest first (ties by problem
/// key). One query for the whole run.
Result<std::vector<WarmStart>> nearby_winners(Database& db, const std::string& device_key,
                                              const Problem& problem);

/// The warm starts for one template's `space`: of `near` (nearby_winners),
/// those of template `template_name` inside `space` other than `first` (the
/// default, proposed anyway), each configuration once, at most `count`,
/// with their index in `space`.
std::vector<std::pair<std::size_t, WarmStart>> warm_starts(const std::vector<WarmStart>& near,
                                                           const std::string& template_name,
                                                           const std::vector<Config>& space,
                                                           std::size_t first, int count);

}  // namespace kforge
