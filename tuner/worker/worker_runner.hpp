// Runs candidates in a supervised worker process (docs/measurement.md,
// "Isolation"). The worker is a fresh exec of `command` (the kforge binary's
// hidden `__worker` entry, tuner/worker/worker_main.hpp), so it never inherits the
// tuner's device state. A candidate that kills the worker (a segfault, an
// abort, a sticky device error) is recorded as `crash`; one that runs past
// its timeout is recorded as `timeout` and the worker is killed, not waited
// for. Either way the next candidate gets a new worker, which reads the
// validation references the first one wrote to the run's reference
// directory (reference_file.hpp) instead of computing them again.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tuner/candidate_runner.hpp"
#include "tuner/worker/worker_timeouts.hpp"

namespace kforge {

class WorkerRunner final : public CandidateRunner {
 public:
  /// `command`: argv of the worker; the socket's descriptor number is appended.
  /// Without a reference directory in `setup`, makes one private to the run.
  WorkerRunner(RunnerSetup setup, std::vector<std::string> command, WorkerTimeouts timeouts);
  /// The directory the workers share the validation references through.
  const std::string& reference_dir() const { return setup_.reference_dir; }
  ~WorkerRunner() override;

  Result<Evaluation> evaluate(const std::string& template_name, const Config& config, double best_ms,
                              const std::function<void(std::string_view)>& on_phase = {}) override;
  /// A candidate that crashes or hangs the worker here is final, as in
  /// evaluate(); one that passes is held by the worker until evaluated.
  Result<Evaluation> validate(const std::string& template_name, const Config& config,
                              const std::function<void(std::string_view)>& on_phase = {}) override;
  Result<RetimeReport> retime(const std::vector<CandidateRef>& finalists) override;
  /// A worker lost while compiling the batch (a compiler crash) is an error
  /// here; the tuner then compiles each candidate on its own, where a crash
  /// costs only that candidate.
  Result<PrecompileReport> precompile(const std::vector<CandidateRef>& batch) override;

  int restarts() const { return restarts_; }  ///< workers started after a crash or timeout
  /// Wall seconds spent starting the measuring worker (device, inputs,
  /// references), restarts included.
  double setup_seconds() const { return setup_s_; }
  /// Code generators (RunnerSetup::code_generators) lost to a crash or a
  /// timeout. What one lost at a launch had left, the others launch; a
  /// share whose build it did not finish is compiled by the worker, one
  /// candidate at a time.
  int generators_lost() const { return generators_lost_; }
  /// Of those, lost after the launch began to run (the kernel crashed, or
  /// ran past WorkerTimeouts::run_floor_s): its machine code was cached by then.
  int generators_lost_running() const { return generators_lost_running_; }
  /// Validation references that restarted workers read from the run's
  /// reference directory instead of computing (two per restart when all went well).
  int references_reused() const { return references_reused_; }
  /// Shares of a batch built again in a worker started after a crash or a
  /// timeout, for the candidates of theirs still to evaluate (rebuild_share).
  int shares_rebuilt() const { return shares_rebuilt_; }

 private:
  struct Worker;
  class PhaseDeadline;    ///< a request's deadline as the worker's phases arrive
  struct GeneratorRound;  ///< one precompile_in_generators()
  /// Sends an "evaluate" or "validate" request (`kind`) for one candidate and waits
  /// for its evaluation under the phase timeouts; a crash or a hang of the
  /// worker is the candidate's outcome.
  Result<Evaluation> request(const char* kind, const std::string& template_name, const Config& config,
                             double best_ms, const std::function<void(std::string_view)>& on_phase);
  /// The launches' expected time for `c` (best_ms, or its validation
  /// launch's while none is known), forgetting the validation it was held
  /// by; `held_here`: held by this worker.
  double take_validated_ms(const CandidateRef& c, double best_ms, bool& held_here);
  /// The outcome of a candidate whose worker timed out or ended: stops the
  /// worker and says in which phase.
  Evaluation lost_worker(bool timed_out, const PhaseDeadline& deadline, const CandidateRef& c,
                         double rebuild_s);
  /// Device time (ms) of each held candidate's untimed validation launch
  /// (validate), with the worker (started_) that holds it: evaluate()'s
  /// launch timeout scales with it before any candidate has a time.
  std::map<std::pair<std::string, std::string>, std::pair<int, double>> validated_ms_;
  /// The fastest of those launches in the run (ms; 0: none yet): what a
  /// validation expects once its first launch runs, before any candidate has a time.
  double fastest_validated_ms_ = 0;
  /// Starts a process running `setup` in `w`, unless one is running there.
  Status start(std::unique_ptr<Worker>& w, const RunnerSetup& setup);
  /// Kills (SIGKILL) and reaps the process in `w`; "" or how it ended ("killed by SIGSEGV").
  std::string stop(std::unique_ptr<Worker>& w, bool kill_first);
  /// Starts the worker and sends it the setup, unless one is running.
  Status ensure_worker();
  std::string stop_worker(bool kill_first) { return stop(worker_, kill_first); }
  /// precompile() shared out among the code generators.
  Result<PrecompileReport> precompile_in_generators(const std::vector<CandidateRef>& batch);
  /// precompile() in the measuring worker; the batch is remembered as one
  /// of the run's shares (rebuild_share).
  Result<PrecompileReport> precompile_in_worker(const std::vector<CandidateRef>& batch);
  /// Sends `share` to the measuring worker to build, and waits for it.
  Result<PrecompileReport> build_in_worker(const std::vector<CandidateRef>& share);
  /// Before evaluating `c` in a worker started after its share was built
  /// (the one that built it crashed or hung on another candidate), builds
  /// that share again, whole, so that it is the same program as before and
  /// PoCL finds it and its machine code in its cache, rather than leaving
  /// the share's other candidates to compile one at a time. Once per share
  /// and worker; a share whose build fails is left to evaluate(). Returns
  /// the seconds the build took (0: none).
  double rebuild_share(const CandidateRef& c);

  RunnerSetup setup_;
  std::vector<std::string> command_;
  WorkerTimeouts timeouts_;
  std::unique_ptr<Worker> worker_;
  std::vector<std::unique_ptr<Worker>> generators_;
  int started_ = 0, restarts_ = 0, generators_lost_ = 0, references_reused_ = 0, shares_rebuilt_ = 0;
  std::atomic<int> generators_lost_running_{0};
  /// The run's shares of batches as the measuring worker built them, each
  /// with the number (started_) of the worker that holds it, for
  /// rebuild_share (the finalists' too, before they are re-timed).
  struct Share {
    std::vector<CandidateRef> members;
    int worker = 0;
  };
  std::vector<Share> shares_;
  /// Made by the constructor under TMPDIR as kforge-references-<pid>-XXXXXX,
  /// removed by the destructor; one left by a killed tuner is removed by the
  /// next WorkerRunner on the machine.
  std::string owned_reference_dir_;
  double setup_s_ = 0;
};

}  // namespace kforge
