// Compiles candidates ahead on a fixed pool of threads. Jobs are keyed by
// candidate; a consumer takes a job's result, running it itself while it
// still waits for a thread and waiting while it runs. Queued jobs that are
// no longer wanted can be dropped (drop_queued_if). Whether compiling may
// overlap a timed launch is the caller's choice (docs/measurement.md,
// "Compile pipeline"): on a CPU device the caller waits for a batch before
// the next timed run; on a GPU it goes on measuring while the pool compiles.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace kforge {

template <typename Key, typename Value>
class CompileQueue {
 public:
  explicit CompileQueue(int threads) : threads_(threads < 1 ? 1 : threads) {}
  CompileQueue(const CompileQueue&) = delete;
  CompileQueue& operator=(const CompileQueue&) = delete;

  /// Stops taking queued jobs, lets running ones finish, joins the threads.
  ~CompileQueue() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      queue_.clear();
    }
    cv_.notify_all();
    for (auto& t : pool_) t.join();
  }

  /// Queues `job` under `key` unless that key is already queued, running or
  /// done; returns whether it was queued. Never waits for the job.
  bool submit(const Key& key, std::function<Value()> job) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_ || slots_.count(key)) return false;
      slots_.emplace(key, Slot{});
      queue_.emplace_back(key, std::move(job));
      // Threads start on first use, so a queue never used costs nothing.
      if (pool_.size() < static_cast<std::size_t>(threads_) && pool_.size() < queue_.size() + running_) {
        pool_.emplace_back([this] { work(); });
      }
    }
    cv_.notify_one();
    return true;
  }

  /// Whether `key` was submitted and not yet taken.
  bool contains(const Key& key) const {
    std::lock_guard<std::mutex> lock(mu_);
    return slots_.count(key) > 0;
  }

  /// The result of `key`'s job, removed from the queue. A job still waiting
  /// for a thread runs here and now, so a caller never waits behind jobs
  /// queued before it (compiles on a guess, say); a running one is waited
  /// for. nullopt when `key` was never submitted (or was taken already).
  /// `*ready` tells whether the result was there when take() was called.
  std::optional<Value> take(const Key& key, bool* ready = nullptr) {
    if (ready) *ready = false;
    std::unique_lock<std::mutex> lock(mu_);
    auto it = slots_.find(key);
    if (it == slots_.end()) return std::nullopt;
    if (ready) *ready = it->second.value.has_value();
    auto queued = std::find_if(queue_.begin(), queue_.end(), [&](const auto& q) { return q.first == key; });
    if (queued != queue_.end()) {
      std::function<Value()> job = std::move(queued->second);
      queue_.erase(queued);
      slots_.erase(it);
      lock.unlock();
      return job();
    }
    done_cv_.wait(lock, [&] { return slots_.at(key).value.has_value(); });
    it = slots_.find(key);
    std::optional<Value> out = std::move(it->second.value);
    slots_.erase(it);
    return out;
  }

  /// Drops the jobs still waiting for a thread whose key satisfies `drop`,
  /// as if never submitted; running and finished ones stay. Returns how many
  /// were dropped. Compiles on a guess that a newer guess no longer includes
  /// thus stop taking threads from the ones it does.
  template <typename Pred>
  std::size_t drop_queued_if(Pred drop) {
    std::lock_guard<std::mutex> lock(mu_);
    std::size_t dropped = 0;
    for (auto q = queue_.begin(); q != queue_.end();) {
      if (!drop(q->first)) {
        ++q;
        continue;
      }
      slots_.erase(q->first);
      q = queue_.erase(q);
      ++dropped;
    }
    return dropped;
  }

  /// Waits until every submitted job has finished (results stay to be taken).
  void wait_idle() {
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [&] { return queue_.empty() && running_ == 0; });
  }

 private:
  struct Slot {
    std::optional<Value> value;
  };

  void work() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      auto [key, job] = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
      lock.unlock();
      Value v = job();
      lock.lock();
      --running_;
      if (auto it = slots_.find(key); it != slots_.end()) it->second.value.emplace(std::move(v));
      done_cv_.notify_all();
    }
  }

  const int threads_;
  mutable std::mutex mu_;
  std::condition_variable cv_;       ///< a job was queued, or the queue stops
  std::condition_variable done_cv_;  ///< a job finished
  std::deque<std::pair<Key, std::function<Value()>>> queue_;
  std::map<Key, Slot> slots_;
  std::size_t running_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> pool_;
};

}  // namespace kforge
