// The MPI calls a distributed sweep makes, in one place: start and end,
// who this rank is, gathering text on rank 0, agreeing on an error, and the
// request / answer / heartbeat messages between the ranks and rank 0's
// coordinator.
// Built only with KFORGE_WITH_MPI.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kforge {

class MpiSession {
 public:
  /// MPI_Init_thread, asking that any one thread at a time may call MPI.
  MpiSession();
  ~MpiSession();  ///< MPI_Finalize
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// This rank's place among the ranks on its node (MPI_COMM_TYPE_SHARED).
  int local_rank() const { return local_rank_; }
  /// Whether rank 0 may serve requests from a thread of its own while its
  /// main thread tunes (MPI_THREAD_SERIALIZED or better).
  bool threads_ok() const { return threads_ok_; }

  /// Runs `step` on every rank; when it throws on any rank, every rank ends
  /// there: the lowest such rank rethrows its error (printed once), the
  /// others throw ExitStatus with the same exit code. Collective.
  void on_every_rank(const std::function<void()>& step) const;
  /// Ends the whole job from any rank, in any state (an error while the
  /// other ranks wait on this one): prints "kforge: error: rank R: MESSAGE"
  /// and calls MPI_Abort with exit status 1.
  [[noreturn]] void abort(const std::string& message) const;
  /// Every rank's `mine`, in rank order, on rank 0; empty elsewhere. Collective.
  std::vector<std::string> gather(const std::string& mine) const;

  /// A rank asks rank 0 for work, sending `text`; returns rank 0's answer.
  long long ask(const std::string& text) const;
  /// A rank tells rank 0 it is done and has closed its database, and waits
  /// for the end of the job: false when a rank was lost, so that this one
  /// must skip MPI_Finalize (which would wait for the lost rank).
  bool send_done() const;
  /// Ends without MPI_Finalize: a rank was lost, and finalizing waits for it.
  void skip_finalize() { finalize_ = false; }
  /// A rank tells rank 0 it is alive (from a thread of its own while it
  /// tunes, so that rank 0 can tell a long task from a dead rank).
  void send_heartbeat() const;

  /// What rank 0 receives next: a request (text), a heartbeat or a rank done.
  struct Message {
    enum class Kind { kRequest, kHeartbeat, kDone };
    int from = -1;
    Kind kind = Kind::kRequest;
    std::string text;
  };
  /// Rank 0: the next message if one has arrived, without waiting.
  std::optional<Message> poll() const;
  /// Rank 0: answers `to`'s request.
  void answer(int to, long long value) const;

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0;
  bool threads_ok_ = false;
  bool finalize_ = true;
  /// One thread at a time in MPI (MPI_THREAD_SERIALIZED): a rank's requests
  /// and its heartbeats come from two threads.
  mutable std::mutex mu_;
};

}  // namespace kforge
