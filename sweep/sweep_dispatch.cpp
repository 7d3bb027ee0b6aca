// Task hand-out for distributed sweeps.
#include "sweep/sweep_dispatch.hpp"

namespace kforge {

SweepDispatch::SweepDispatch(std::vector<std::size_t> pending, int ranks)
    : running_(static_cast<std::size_t>(ranks > 0 ? ranks : 0)), lost_(running_.size(), false), total_(pending.size()) {
  for (std::size_t t : pending) pending_.push_back({t, -1});
}

void SweepDispatch::prefer(std::size_t task, int rank) {
  if (rank < 0 || static_cast<std::size_t>(rank) >= running_.size()) return;
  for (auto& p : pending_) {
    if (p.task == task) p.preferred_rank = rank;
  }
}

std::optional<std::size_t> SweepDispatch::take(std::size_t position, int rank) {
  const std::size_t task = pending_[position].task;
  pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(position));
  running_[static_cast<std::size_t>(rank)] = task;
  return task;
}

std::optional<std::size_t> SweepDispatch::next(int rank) {
  if (rank < 0 || static_cast<std::size_t>(rank) >= running_.size() || pending_.empty() || lost(rank))
    return std::nullopt;
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    if (pending_[i].preferred_rank == rank) return take(i, rank);
  }
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    if (pending_[i].preferred_rank < 0) return take(i, rank);
  }
  // The rest wait for the ranks that prefer them, which ask in turn.
  return std::nullopt;
}

void SweepDispatch::finish(int rank) {
  if (rank < 0 || static_cast<std::size_t>(rank) >= running_.size()) return;
  auto& slot = running_[static_cast<std::size_t>(rank)];
  if (slot) ++finished_;
  slot.reset();
}

std::optional<std::size_t> SweepDispatch::lose(int rank) {
  if (rank < 0 || static_cast<std::size_t>(rank) >= running_.size()) return std::nullopt;
  lost_[static_cast<std::size_t>(rank)] = true;
  for (auto& p : pending_) {
    if (p.preferred_rank == rank) p.preferred_rank = -1;
  }
  auto& slot = running_[static_cast<std::size_t>(rank)];
  const std::optional<std::size_t> task = slot;
  slot.reset();
  if (task) pending_.insert(pending_.begin(), {*task, -1});
  return task;
}

bool SweepDispatch::lost(int rank) const {
  return rank >= 0 && static_cast<std::size_t>(rank) < lost_.size() && lost_[static_cast<std::size_t>(rank)];
}

std::optional<std::size_t> SweepDispatch::running(int rank) const {
  if (rank < 0 || static_cast<std::size_t>(rank) >= running_.size()) return std::nullopt;
  return running_[static_cast<std::size_t>(rank)];
}

std::size_t SweepDispatch::running_count() const {
  std::size_t n = 0;
  for (const auto& r : running_) n += r.has_value();
  return n;
}

}  // namespace kforge
