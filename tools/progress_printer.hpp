// Live progress for tune and sweep: one redrawn status line on a terminal, one
// line per candidate otherwise, nothing with --quiet. Writes to stderr so that
// --json output on stdout stays clean.
#pragma once

#include <string>

#include "sweep/sweep_eta.hpp"
#include "tuner/tuner.hpp"

namespace kforge::cli {

class ProgressPrinter {
 public:
  enum class Format { kText, kJsonLines };
  explicit ProgressPrinter(bool quiet, Format format = Format::kText);
  void operator()(const TuneEvent& e);
  /// Within a sweep: prefixes every line with "task INDEX/COUNT" (1-based)
  /// and names the task's problem when its tuning starts.
  void set_task(std::size_t index, std::size_t count, std::string key);
  /// Within a sweep: the estimate of the whole sweep's time left, shown
  /// after the task's own. Must outlive the printer; nullptr: none.
  void set_sweep_eta(const SweepEta* eta) { sweep_eta_ = eta; }
  /// One line outside any candidate (a task skipped or failed), kept clear of the live line.
  void note(const std::string& line);

 private:
  /// Candidates per second, past the run's setup once there is a rate to go by.
  static double candidate_rate(const TuneEvent& e);
  void print_phase(const TuneEvent& e);
  /// One whole line, clearing a live line first.
  void print_line(const std::string& text);
  /// --progress json: one JSON object per event, a line each.
  void print_json(const TuneEvent& e);

  bool quiet_;
  Format format_;
  bool tty_;
  std::string task_;  ///< "task 2/5 " within a sweep, else empty
  std::string key_;
  const SweepEta* sweep_eta_ = nullptr;
};

}  // namespace kforge::cli
