// Derived features, the initial space-filling design and one-parameter
// neighborhoods for the model-based and annealing strategies.
#include "tuner/search/strategy_features.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

namespace kforge {

namespace {

/// log2 of every raw column that varies, one vector per column (unscaled).
std::vector<std::vector<double>> log_columns(const SpaceFeatures& raw) {
  const std::size_t n = raw.size();
  const std::size_t dims = n ? raw[0].size() : 0;
  std::vector<std::vector<double>> logs;
  for (std::size_t d = 0; d < dims; ++d) {
    double lo = 1e300, hi = -1e300;
    for (const auto& row : raw) {
      lo = std::min(lo, row[d]);
      hi = std::max(hi, row[d]);
    }
    if (hi <= lo) continue;
    std::vector<double> col(n);
    for (std::size_t i = 0; i < n; ++i) col[i] = lo > 0 ? std::log2(raw[i][d]) : std::log2(1.0 + raw[i][d] - lo);
    logs.push_back(std::move(col));
  }
  return logs;
}

/// Rows of `n` configurations from columns, each scaled to [0, 1]; constant
/// columns are dropped, and no column left gives one column of zeros.
SpaceFeatures scaled_rows(const std::vector<std::vector<double>>& cols, std::size_t n) {
  SpaceFeatures out(n);
  for (const auto& col : cols) {
    const auto [lo, hi] = std::minmax_element(col.begin(), col.end());
    const double l = *lo, span = *hi - *lo;
    if (span <= 0) continue;  // e.g. a ratio of two columns that always move together
    for (std::size_t i = 0; i < n; ++i) out[i].push_back((col[i] - l) / span);
  }
  if (n && out[0].empty()) {
    for (auto& row : out) row.push_back(0.0);
  }
  return out;
}

}  // namespace

SpaceFeatures derived_features(const SpaceFeatures& raw) {
  const std::size_t n = raw.size();
  const auto logs = log_columns(raw);
  std::vector<std::vector<double>> cols = logs;
  for (std::size_t a = 0; a < logs.size(); ++a) {
    for (std::size_t b = a + 1; b < logs.size(); ++b) {
      std::vector<double> sum(n), diff(n);
      for (std::size_t i = 0; i < n; ++i) {
        sum[i] = logs[a][i] + logs[b][i];
        diff[i] = logs[a][i] - logs[b][i];
      }
      cols.push_back(std::move(sum));
      cols.push_back(std::move(diff));
    }
  }
  return scaled_rows(cols, n);
}

std::vector<std::size_t> space_filling_design(const SpaceFeatures& features, const std::vector<std::size_t>& firsts,
                                              std::size_t count, std::size_t candidates, SplitMix64& rng) {
  const std::size_t n = features.size();
  std::vector<std::size_t> design;
  if (n == 0 || count == 0) return design;
  std::vector<double> nearest(n, 1e300);  // squared distance to the design so far
  auto add = [&](std::size_t i) {
    design.push_back(i);
    for (std::size_t j = 0; j < n; ++j) {
      double d2 = 0;
      for (std::size_t k = 0; k < features[j].size(); ++k) {
        const double d = features[j][k] - features[i][k];
        d2 += d * d;
      }
      nearest[j] = std::min(nearest[j], d2);
    }
  };
  for (std::size_t f : firsts) {
    if (f < n && std::find(design.begin(), design.end(), f) == design.end()) add(f);
  }
  if (design.empty()) add(static_cast<std::size_t>(rng.below(n)));
  while (design.size() < std::min(count, n)) {
    if (std::none_of(nearest.begin(), nearest.end(), [](double d) { return d > 0; })) break;
    double far = 0;
    std::vector<std::size_t> ties;
    auto weigh = [&](std::size_t j) {
      if (nearest[j] <= 0) return;  // chosen, or equal in every feature to a chosen one
      if (nearest[j] > far * (1 + 1e-9)) {
        far = nearest[j];
        ties = {j};
      } else if (nearest[j] >= far * (1 - 1e-9)) {
        ties.push_back(j);
      }
    };
    if (candidates == 0) {
      for (std::size_t j = 0; j < n; ++j) weigh(j);
    } else {
      for (std::size_t c = 0; c < candidates; ++c) weigh(static_cast<std::size_t>(rng.below(n)));
    }
    if (ties.empty()) continue;  // every draw hit the design; draw again
    add(ties[rng.below(ties.size())]);
  }
  return design;
}

DerivedFeatureRows::DerivedFeatureRows(const CodedSpace& space) : space_(&space) {
  for (std::size_t d = 0; d < space.dims(); ++d) {
    const auto& values = space.values(d);
    if (values.size() < 2) continue;
    const double lo = values.front();
    std::vector<double> logs;
    for (double v : values) logs.push_back(lo > 0 ? std::log2(v) : std::log2(1.0 + v - lo));
    columns_.push_back(d);
    log_lo_.push_back(logs.front());
    log_span_.push_back(logs.back() - logs.front());
    logs_.push_back(std::move(logs));
  }
  for (std::size_t a = 0; a < columns_.size(); ++a) {
    for (std::size_t b = a + 1; b < columns_.size(); ++b) pairs_.push_back({a, b});
  }
  // The pairwise columns' ranges over the configurations the space holds.
  std::vector<double> sum_hi(pairs_.size(), -1e300), diff_hi(pairs_.size(), -1e300);
  for (auto& p : pairs_) p.sum_lo = p.diff_lo = 1e300;
  std::vector<double> logs(columns_.size());
  for (std::size_t i = 0; i < space.size(); ++i) {
    for (std::size_t c = 0; c < columns_.size(); ++c) logs[c] = logs_[c][space.code(i, columns_[c])];
    for (std::size_t k = 0; k < pairs_.size(); ++k) {
      Pair& p = pairs_[k];
      const double sum = logs[p.a] + logs[p.b], diff = logs[p.a] - logs[p.b];
      p.sum_lo = std::min(p.sum_lo, sum);
      sum_hi[k] = std::max(sum_hi[k], sum);
      p.diff_lo = std::min(p.diff_lo, diff);
      diff_hi[k] = std::max(diff_hi[k], diff);
    }
  }
  width_ = columns_.size();
  for (std::size_t k = 0; k < pairs_.size(); ++k) {
    Pair& p = pairs_[k];
    p.sum_span = std::max(0.0, sum_hi[k] - p.sum_lo);
    p.diff_span = std::max(0.0, diff_hi[k] - p.diff_lo);
    width_ += (p.sum_span > 0) + (p.diff_span > 0);
  }
  if (width_ == 0 && space.size() > 0) width_ = 1;  // derived_features' column of zeros
}

std::vector<double> DerivedFeatureRows::row(std::size_t i) const {
  std::vector<double> out;
  row(i, out);
  return out;
}

void DerivedFeatureRows::row(std::size_t i, std::vector<double>& out) const {
  out.clear();
  std::array<double, 64> small{};  // the logs, without an allocation for up to 64 columns
  std::vector<double> large;
  double* logs = small.data();
  if (columns_.size() > small.size()) {
    large.resize(columns_.size());
    logs = large.data();
  }
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    logs[c] = logs_[c][space_->code(i, columns_[c])];
    out.push_back((logs[c] - log_lo_[c]) / log_span_[c]);
  }
  for (const Pair& p : pairs_) {
    if (p.sum_span > 0) out.push_back((logs[p.a] + logs[p.b] - p.sum_lo) / p.sum_span);
    if (p.diff_span > 0) out.push_back((logs[p.a] - logs[p.b] - p.diff_lo) / p.diff_span);
  }
  if (out.empty()) out.push_back(0.0);
}

std::vector<std::size_t> sampled_design(const DerivedFeatureRows& features, std::size_t size,
                                        const std::vector<std::size_t>& firsts, std::size_t count,
                                        std::size_t draws, SplitMix64& rng) {
  std::vector<std::size_t> design;
  std::vector<std::vector<double>> rows;  // the design's features
  auto add = [&](std::size_t i) {
    design.push_back(i);
    rows.push_back(features.row(i));
  };
  if (size == 0 || count == 0) return design;
  for (std::size_t f : firsts) {
    if (f < size && std::find(design.begin(), design.end(), f) == design.end()) add(f);
  }
  if (design.empty()) add(static_cast<std::size_t>(rng.below(size)));
  for (std::size_t tries = 0; design.size() < std::min(count, size) && tries < 4 * count; ++tries) {
    double far = 0;
    std::size_t pick = size;
    for (std::size_t c = 0; c < draws; ++c) {
      const auto j = static_cast<std::size_t>(rng.below(size));
      const auto row = features.row(j);
      double nearest = 1e300;
      for (const auto& r : rows) {
        double d2 = 0;
        for (std::size_t k = 0; k < r.size(); ++k) d2 += (row[k] - r[k]) * (row[k] - r[k]);
        nearest = std::min(nearest, d2);
      }
      if (nearest > far) {
        far = nearest;
        pick = j;
      }
    }
    if (pick < size) add(pick);  // none when every draw equals a chosen configuration
  }
  return design;
}

std::size_t initial_design_size(std::size_t size, std::size_t firsts) {
  return std::max(std::clamp<std::size_t>((size + 49) / 50, 4, 10), firsts + 1);
}

SpaceFeatures parameter_features(const SpaceFeatures& raw) { return scaled_rows(log_columns(raw), raw.size()); }

std::vector<std::size_t> initial_design(const SpaceFeatures& features, const std::vector<std::size_t>& firsts,
                                        SplitMix64& rng, std::size_t draws_per_point) {
  const std::size_t count = initial_design_size(features.size(), firsts.size());
  return space_filling_design(features, firsts, count, draws_per_point, rng);
}

std::vector<std::vector<std::size_t>> one_parameter_neighbors_unsorted(const SpaceFeatures& raw) {
  const std::size_t n = raw.size();
  const std::size_t dims = n ? raw[0].size() : 0;
  std::vector<std::vector<std::size_t>> neighbors(n);
  for (std::size_t d = 0; d < dims; ++d) {
    std::map<std::vector<double>, std::vector<std::size_t>> groups;  // the row without column d
    for (std::size_t i = 0; i < n; ++i) {
      auto key = raw[i];
      key.erase(key.begin() + static_cast<std::ptrdiff_t>(d));
      groups[key].push_back(i);
    }
    for (const auto& [key, members] : groups) {
      for (std::size_t a : members) {
        for (std::size_t b : members) {
          if (a != b) neighbors[a].push_back(b);
        }
      }
    }
  }
  return neighbors;
}

std::vector<std::vector<std::size_t>> one_parameter_neighbors(const SpaceFeatures& raw) {
  auto neighbors = one_parameter_neighbors_unsorted(raw);
  for (auto& list : neighbors) std::sort(list.begin(), list.end());
  return neighbors;
}

}  // namespace kforge
