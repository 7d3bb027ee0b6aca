// MPI for the distributed sweep.
#include "sweep/mpi/mpi_session.hpp"

#include <mpi.h>

#include <cstdlib>
#include <exception>
#include <iostream>

#include "core/exit_status.hpp"

namespace kforge {

namespace {

constexpr int kTagRequest = 1;
constexpr int kTagAnswer = 2;
constexpr int kTagDone = 3;
constexpr int kTagHeartbeat = 4;

int exit_code_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const ErrorException& x) {
    return exit_code_for(x.error());
  } catch (const ExitStatus& x) {
    return x.code;
  } catch (...) {
    return kExitFailure;
  }
}

}  // namespace

MpiSession::MpiSession() {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  threads_ok_ = provided >= MPI_THREAD_SERIALIZED;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_rank_);
  MPI_Comm_free(&node);
}

MpiSession::~MpiSession() {
  if (finalize_) MPI_Finalize();
}

void MpiSession::on_every_rank(const std::function<void()>& step) const {
  std::exception_ptr error;
  try {
    step();
  } catch (...) {
    error = std::current_exception();
  }
  const int mine = error ? rank_ : size_;
  int lowest = size_;
  MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (lowest == size_) return;
  int code = error ? exit_code_of(error) : 0;
  MPI_Bcast(&code, 1, MPI_INT, lowest, MPI_COMM_WORLD);
  if (rank_ == lowest) std::rethrow_exception(error);
  throw ExitStatus{code};
}

void MpiSession::abort(const std::string& message) const {
  std::cerr << "kforge: error: rank " << rank_ << ": " << message << "\n";
  MPI_Abort(MPI_COMM_WORLD, kExitFailure);
  std::abort();  // MPI_Abort does not return; this says so to the compiler
}

std::vector<std::string> MpiSession::gather(const std::string& mine) const {
  const int n = static_cast<int>(mine.size());
  std::vector<int> sizes(rank_ == 0 ? static_cast<std::size_t>(size_) : 0);
  MPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(sizes.size());
  int total = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    offsets[i] = total;
    total += sizes[i];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Gatherv(mine.data(), n, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0,
              MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    out.push_back(all.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(sizes[i])));
  }
  return out;
}

long long MpiSession::ask(const std::string& text) const {
  std::lock_guard lock(mu_);
  MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, 0, kTagRequest, MPI_COMM_WORLD);
  long long value = -1;
  MPI_Recv(&value, 1, MPI_LONG_LONG, 0, kTagAnswer, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return value;
}

bool MpiSession::send_done() const {
  std::lock_guard lock(mu_);
  MPI_Send(nullptr, 0, MPI_CHAR, 0, kTagDone, MPI_COMM_WORLD);
  long long finalize = 1;
  MPI_Recv(&finalize, 1, MPI_LONG_LONG, 0, kTagAnswer, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return finalize != 0;
}

void MpiSession::send_heartbeat() const {
  std::lock_guard lock(mu_);
  MPI_Send(nullptr, 0, MPI_CHAR, 0, kTagHeartbeat, MPI_COMM_WORLD);
}

std::optional<MpiSession::Message> MpiSession::poll() const {
  int flag = 0;
  MPI_Status status;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
  if (!flag) return std::nullopt;
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  Message m;
  m.from = status.MPI_SOURCE;
  m.kind = status.MPI_TAG == kTagDone        ? Message::Kind::kDone
           : status.MPI_TAG == kTagHeartbeat ? Message::Kind::kHeartbeat
                                             : Message::Kind::kRequest;
  m.text.resize(static_cast<std::size_t>(count));
  MPI_Recv(m.text.data(), count, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  return m;
}

void MpiSession::answer(int to, long long value) const {
  MPI_Send(&value, 1, MPI_LONG_LONG, to, kTagAnswer, MPI_COMM_WORLD);
}

}  // namespace kforge
