// The coded table and its open-addressing index.
#include "tuner/search/coded_space.hpp"

#include <algorithm>
#include <stdexcept>

namespace kforge {

CodedSpace::CodedSpace(std::vector<std::vector<double>> values, std::vector<std::uint16_t> codes)
    : values_(std::move(values)), codes_(std::move(codes)) {
  size_ = values_.empty() ? 0 : codes_.size() / values_.size();
  if (size_ >= UINT32_MAX) throw std::length_error("CodedSpace: more than 2^32 - 2 configurations");
  build_index();
}

CodedSpace CodedSpace::from_features(const SpaceFeatures& raw) {
  const std::size_t n = raw.size();
  const std::size_t dims = n ? raw[0].size() : 0;
  std::vector<std::vector<double>> values(dims);
  for (std::size_t d = 0; d < dims; ++d) {
    for (const auto& row : raw) values[d].push_back(row[d]);
    std::sort(values[d].begin(), values[d].end());
    values[d].erase(std::unique(values[d].begin(), values[d].end()), values[d].end());
    if (values[d].size() > UINT16_MAX) throw std::length_error("CodedSpace: more than 65535 values in a column");
  }
  std::vector<std::uint16_t> codes(n * dims);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t d = 0; d < dims; ++d) {
      const auto at = std::lower_bound(values[d].begin(), values[d].end(), raw[i][d]) - values[d].begin();
      codes[i * dims + d] = static_cast<std::uint16_t>(at);
    }
  }
  return CodedSpace(std::move(values), std::move(codes));
}

std::uint64_t CodedSpace::hash_row(const std::uint16_t* row) const {
  std::uint64_t h = 0x9e3779b97f4a7c15ull;
  for (std::size_t d = 0; d < dims(); ++d) {
    h ^= row[d] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ull;
  }
  return h ^ (h >> 31);
}

void CodedSpace::build_index() {
  std::size_t capacity = 16;
  while (capacity < 2 * size_) capacity *= 2;
  slots_.assign(capacity, 0);
  const std::size_t mask = capacity - 1;
  for (std::size_t i = 0; i < size_; ++i) {
    std::size_t s = hash_row(&codes_[i * dims()]) & mask;
    while (slots_[s] != 0) s = (s + 1) & mask;
    slots_[s] = static_cast<std::uint32_t>(i + 1);
  }
}

std::optional<std::size_t> CodedSpace::find(const std::uint16_t* row) const {
  if (size_ == 0) return std::nullopt;
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t s = hash_row(row) & mask; slots_[s] != 0; s = (s + 1) & mask) {
    const std::size_t i = slots_[s] - 1;
    if (std::equal(row, row + dims(), &codes_[i * dims()])) return i;
  }
  return std::nullopt;
}

std::vector<std::size_t> CodedSpace::neighbors(std::size_t i) const {
  std::vector<std::uint16_t> row(&codes_[i * dims()], &codes_[i * dims()] + dims());
  std::vector<std::size_t> out;
  for (std::size_t d = 0; d < dims(); ++d) {
    const std::uint16_t own = row[d];
    for (std::size_t v = 0; v < values_[d].size(); ++v) {
      if (v == own) continue;
      row[d] = static_cast<std::uint16_t>(v);
      if (auto j = find(row.data())) out.push_back(*j);
    }
    row[d] = own;
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kforge
