// The lock-free-read selection cache (see selection_cache.hpp).
#include "runtime/lookup/selection_cache.hpp"

#include <string_view>

#include "runtime/lookup/lookup.hpp"

namespace kforge {

namespace {

constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ull;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ull;
constexpr std::size_t kInitialCapacity = 64;  // a power of two

inline std::uint64_t fnv(std::uint64_t h, std::string_view s) noexcept {
  for (unsigned char c : s) h = (h ^ c) * kFnvPrime;
  return (h ^ 0xff) * kFnvPrime;  // ends the field: ("ab","c") != ("a","bc")
}

inline std::uint64_t mix(std::uint64_t h, std::uint64_t v) noexcept {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

/// splitmix64's finalizer: spreads the bits so that `hash & mask` is uniform.
inline std::uint64_t finalize(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

std::uint64_t problem_hash(const Problem& p) noexcept {
  std::uint64_t h = fnv(kFnvOffset, p.op);
  for (const auto& [name, value] : p.dims) {
    h = fnv(h, name);
    h = mix(h, static_cast<std::uint64_t>(value));
  }
  h = mix(h, static_cast<std::uint64_t>(p.dtype));
  h = mix(h, (p.layout.trans_a ? 2u : 0u) | (p.layout.trans_b ? 1u : 0u));
  return finalize(h);
}

struct SelectionCache::Entry {
  std::uint64_t hash;
  Problem problem;
  Selection selection;
};

struct SelectionCache::Table {
  explicit Table(std::size_t capacity)
      : mask(capacity - 1), slots(new std::atomic<Entry*>[capacity]) {
    for (std::size_t i = 0; i < capacity; ++i) slots[i].store(nullptr, std::memory_order_relaxed);
  }
  std::size_t capacity() const { return mask + 1; }
  /// Places `e` in the first free slot of its probe sequence (writer only).
  void place(Entry* e) {
    std::size_t i = e->hash & mask;
    while (slots[i].load(std::memory_order_relaxed) != nullptr) i = (i + 1) & mask;
    slots[i].store(e, std::memory_order_release);
  }
  std::size_t mask;
  std::unique_ptr<std::atomic<Entry*>[]> slots;
};

SelectionCache::SelectionCache() {
  tables_.push_back(std::make_unique<Table>(kInitialCapacity));
  table_.store(tables_.back().get(), std::memory_order_release);
}

SelectionCache::~SelectionCache() = default;

const Selection* SelectionCache::find(const Problem& p, std::uint64_t hash) const noexcept {
  const Table* t = table_.load(std::memory_order_acquire);
  for (std::size_t i = hash & t->mask;; i = (i + 1) & t->mask) {
    const Entry* e = t->slots[i].load(std::memory_order_acquire);
    if (e == nullptr) return nullptr;  // the load factor stays <= 1/2: a free slot ends every probe
    if (e->hash == hash && e->problem == p) return &e->selection;
  }
}

SelectionCache::Table* SelectionCache::grow_locked(std::size_t min_capacity) {
  Table* old = table_.load(std::memory_order_relaxed);
  std::size_t capacity = old->capacity();
  while (capacity < min_capacity) capacity *= 2;
  if (capacity == old->capacity()) return old;
  auto fresh = std::make_unique<Table>(capacity);
  for (std::size_t i = 0; i < old->capacity(); ++i) {
    if (Entry* e = old->slots[i].load(std::memory_order_relaxed)) fresh->place(e);
  }
  tables_.push_back(std::move(fresh));
  table_.store(tables_.back().get(), std::memory_order_release);  // readers switch whole tables
  return tables_.back().get();
}

const Selection* SelectionCache::insert(const Problem& p, Selection s) {
  const std::uint64_t hash = problem_hash(p);
  std::lock_guard lock(write_mutex_);
  if (const Selection* existing = find(p, hash)) return existing;
  Table* t = grow_locked(2 * (live_ + 1));
  entries_.push_back(std::make_unique<Entry>(Entry{hash, p, std::move(s)}));
  t->place(entries_.back().get());
  ++live_;
  return &entries_.back()->selection;
}

void SelectionCache::clear() {
  std::lock_guard lock(write_mutex_);
  tables_.push_back(std::make_unique<Table>(kInitialCapacity));
  table_.store(tables_.back().get(), std::memory_order_release);
  live_ = 0;
}

std::size_t SelectionCache::size() const {
  std::lock_guard lock(write_mutex_);
  return live_;
}

}  // namespace kforge
