// The per-rank databases of a distributed sweep: each rank tunes into its
// own SQLite file (one file shared by ranks on several nodes is unsafe),
// DB.ranks/rank-R.db beside the plan's database DB, and rank 0 merges them
// into DB (docs/sweep.md, "MPI"). No MPI here: files and merges only.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "db/database.hpp"

namespace kforge {

/// "DB.ranks": the folder beside the plan's database.
std::string rank_databases_dir(const std::string& db_path);
/// "DB.ranks/rank-R.db".
std::string rank_database_path(const std::string& db_path, int rank);

/// One rank database merged into the plan's.
struct MergedRankDatabase {
  int rank = -1;  ///< from its name
  std::string path;
  std::set<std::string> problems;  ///< the problem keys it holds
  Database::MergeReport merge;
};

/// Merges every rank-R.db in the folder (any R: an earlier run may have had
/// more ranks) into `db`, in rank order; the files stay, so that a rank that
/// resumes a task finds its own results. None when the folder is missing.
Result<std::vector<MergedRankDatabase>> merge_rank_databases(Database& db, const std::string& db_path);

/// Removes the folder and the files in it, once every rank database is merged.
void remove_rank_databases(const std::string& db_path);

/// One line on what a merge added: "rank-2.db: +5 results (1 already present)".
std::string merge_line(const MergedRankDatabase& m);

}  // namespace kforge
