// The lookup's hot path: a problem -> selection map whose reads take no lock
// and allocate nothing, so a cached select() costs a hash and a compare.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "generator/problem.hpp"

namespace kforge {

struct Selection;

/// Hash of a problem as the caller wrote it (before normalization): operator,
/// every dim name and value, dtype and layout. Equal problems hash equal;
/// problems differing elsewhere only collide, which the full compare settles.
std::uint64_t problem_hash(const Problem& p) noexcept;

/// Open addressing over immutable entries. find() reads one atomic table
/// pointer and atomic slots (acquire), so it runs concurrently with insert()
/// and clear(), which serialize among themselves. Entries and retired tables
/// live until the cache is destroyed: a pointer find() returned stays valid
/// for the cache's lifetime, even after clear().
class SelectionCache {
 public:
  SelectionCache();
  ~SelectionCache();
  SelectionCache(const SelectionCache&) = delete;
  SelectionCache& operator=(const SelectionCache&) = delete;

  /// The selection cached for `p` (compared as written, not normalized), or nullptr.
  const Selection* find(const Problem& p) const noexcept { return find(p, problem_hash(p)); }
  const Selection* find(const Problem& p, std::uint64_t hash) const noexcept;
  /// Caches `s` for `p` and returns the cached selection (the one already
  /// there when another thread inserted first).
  const Selection* insert(const Problem& p, Selection s);
  /// Forgets every problem (selections already handed out stay valid).
  void clear();
  std::size_t size() const;

 private:
  struct Entry;
  struct Table;
  Table* grow_locked(std::size_t min_capacity);

  std::atomic<Table*> table_;
  mutable std::mutex write_mutex_;
  std::vector<std::unique_ptr<Entry>> entries_;  ///< owned here, never freed before the cache
  std::vector<std::unique_ptr<Table>> tables_;   ///< the current one and every retired one
  std::size_t live_ = 0;                         ///< entries in the current table
};

}  // namespace kforge
