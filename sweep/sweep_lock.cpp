#include "sweep/sweep_lock.hpp"

#include "sweep/rank_databases.hpp"

namespace kforge {

std::string SweepLock::path_for(const std::string& db_path) { return rank_databases_dir(db_path) + ".lock"; }

Result<SweepLock> SweepLock::acquire(const std::string& db_path) {
  const std::string path = path_for(db_path);
  auto lease = FileLease::try_acquire(path, "");
  if (!lease.ok()) return lease.error();
  if (!*lease) {
    return Error::bad_input(db_path + ": another distributed sweep is using it (" + FileLease::holder(path) +
                            ", lock " + path + "); wait for it to end, or give this sweep another --db");
  }
  return SweepLock(std::move(**lease));
}

}  // namespace kforge
