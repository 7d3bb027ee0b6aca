// Per-rank databases of a distributed sweep.
#include "sweep/rank_databases.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <optional>


namespace kforge {

namespace fs = std::filesystem;

std::string rank_databases_dir(const std::string& db_path) {
  return db_path + ".ranks";
}

std::string rank_database_path(const std::string& db_path, int rank) {
  return (fs::path(rank_databases_dir(db_path)) / ("rank-" + std::to_string(rank) + ".db")).string();
}

namespace {

/// R of "rank-R.db"; nullopt for any other name (its -wal and -shm files among them).
std::optional<int> rank_of(const std::string& name) {
  const std::string prefix = "rank-", suffix = ".db";
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return std::nullopt;
  }
  int r = -1;
  const char* first = name.data() + prefix.size();
  const char* last = name.data() + name.size() - suffix.size();
  auto [end, ec] = std::from_chars(first, last, r);
  if (ec != std::errc() || end != last || r < 0) return std::nullopt;
  return r;
}

}  // namespace

Result<std::vector<MergedRankDatabase>> merge_rank_databases(Database& db, const std::string& db_path) {
  std::vector<MergedRankDatabase> out;
  std::error_code ec;
  const fs::path dir = rank_databases_dir(db_path);
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (auto r = rank_of(entry.path().filename().string()))
      out.push_back({*r, entry.path().string(), {}, {}});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
  for (auto& m : out) {
    {
      KF_TRY_ASSIGN(rank_db, Database::open(m.path, Database::Mode::kReadOnly));
      KF_TRY_ASSIGN(problems, rank_db->problems());
      for (const auto& p : problems) m.problems.insert(p.key);
    }
    KF_TRY_ASSIGN(merge, db.merge_from(m.path));
    m.merge = merge;
  }
  return out;
}

void remove_rank_databases(const std::string& db_path) {
  std::error_code ec;
  fs::remove_all(rank_databases_dir(db_path), ec);
}

std::string merge_line(const MergedRankDatabase& m) {
  return fs::path(m.path).filename().string() + ": +" + std::to_string(m.merge.results) + " results (" +
         std::to_string(m.merge.duplicate_results) + " already present), +" + std::to_string(m.merge.sweeps) +
         " sweeps, " + std::to_string(m.problems.size()) + " problems";
}

}  // namespace kforge
