// The messages between the tuner and its worker process: one JSON object
// per line over a socket pair (docs/measurement.md, "Isolation").
//
//   tuner -> worker   {"type":"setup", ...RunnerSetup}
//                     {"type":"evaluate","template":T,"config":C,"best_ms":B}
//                     {"type":"retime","finalists":[{"template":T,"config":C},...]}
//                     {"type":"precompile","batch":[{"template":T,"config":C,"group":G?,"build_only":B?},...]}
//                     {"type":"generate","template":T,"config":C}   (code generators)
//   worker -> tuner   {"type":"ready"} | {"type":"error","message":M}
//                     {"type":"phase","phase":"compiled"}   (then launches begin)
//                     {"type":"phase","phase":"launched"}   (the first validation launch is done)
//                     {"type":"evaluation", ...Evaluation, "restart":bool}
//                     {"type":"retimed","timings":[...],"compiled_alone":N}
//                     {"type":"precompiled","queued":N,"overlapped":B,"compiled":N,"failed":N,
//                      "cache_hits":N,"combined":N,"wall_s":S}
//                     {"type":"generated","ok":B}   (code generators: one work-group launched)
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "tuner/candidate_runner.hpp"

namespace kforge {

/// A list of candidates as [{"template":T,"config":C},...] (with "group"
/// and "build_only" where set), and back. The readers never throw: an
/// entry that does not read back is left out, a timing that does not is
/// empty, and an evaluation that does not is a crash saying so.
nlohmann::json to_json(const std::vector<CandidateRef>& refs);
std::vector<CandidateRef> refs_from_json(const nlohmann::json& list);
nlohmann::json to_json(const TimingStats& t);
TimingStats timing_from_json(const nlohmann::json& j);
nlohmann::json to_json(const Evaluation& e);
Evaluation evaluation_from_json(const nlohmann::json& j);
nlohmann::json to_json(const RunnerSetup& s);
/// kBadInput naming the field when the message lacks or garbles one.
Result<RunnerSetup> setup_from_json(const nlohmann::json& j);
/// Reads MeasurementProtocol::to_json (what sweeps store, and what the
/// setup message carries).
MeasurementProtocol protocol_from_json(const nlohmann::json& j);

/// One end of the socket pair: newline-delimited JSON messages.
class MessageChannel {
 public:
  explicit MessageChannel(int fd) : fd_(fd) {}
  MessageChannel(const MessageChannel&) = delete;
  MessageChannel& operator=(const MessageChannel&) = delete;
  ~MessageChannel();

  Status send(const nlohmann::json& message);
  enum class Wait { kMessage, kClosed, kTimedOut };
  /// Waits until `deadline` for the next message. kClosed: the other end is
  /// gone (end of file or a read error); kTimedOut: nothing came in time.
  Wait receive(std::chrono::steady_clock::time_point deadline, nlohmann::json& message);
  /// Waits without a deadline.
  Wait receive(nlohmann::json& message);

 private:
  int fd_;
  std::string buffer_;
};

}  // namespace kforge
