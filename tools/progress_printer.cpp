// Progress rendering.
#include "tools/progress_printer.hpp"

#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "tuner/measure/finalist_retiming.hpp"

namespace kforge::cli {

ProgressPrinter::ProgressPrinter(bool quiet, Format format)
    : quiet_(quiet), format_(format), tty_(format == Format::kText && isatty(STDERR_FILENO) != 0) {}

void ProgressPrinter::print_json(const TuneEvent& e) {
  static constexpr const char* kKinds[] = {"start", "phase", "candidate", "leader_changed", "done"};
  nlohmann::json j = {{"event", kKinds[static_cast<int>(e.kind)]},
                      {"done", e.done},
                      {"total", e.total},
                      {"elapsed_s", e.elapsed_s},
                      {"failures", e.failures}};
  if (!key_.empty()) j["task"] = key_;
  if (e.kind == TuneEvent::Kind::kPhase) {
    j["phase"] = e.phase == TuneEvent::Phase::kCompile ? "compile" : "retime";
    j["batch"] = e.batch;
  }
  if (const CandidateOutcome* o = e.outcome) {
    j["template"] = o->template_name;
    j["config"] = o->config;
    j["status"] = std::string(status_name(o->status));
    j["reused"] = o->reused;
    if (o->status == CandidateStatus::kOk) j["median_ms"] = o->timing.median_ms;
    else j["reason"] = o->reason;
  }
  if (e.best) j["best"] = {{"template", e.best->template_name}, {"config", e.best->config},
                           {"median_ms", e.best->timing.median_ms}};
  if (e.kind == TuneEvent::Kind::kLeaderChanged && e.replaced) j["replaced"] = e.replaced->config;
  std::fprintf(stderr, "%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  std::fflush(stderr);
}

void ProgressPrinter::set_task(std::size_t index, std::size_t count, std::string key) {
  task_ = "task " + std::to_string(index) + "/" + std::to_string(count) + " ";
  key_ = std::move(key);
}

void ProgressPrinter::note(const std::string& line) {
  if (quiet_) return;
  if (format_ == Format::kJsonLines) {
    std::fprintf(stderr, "%s\n", nlohmann::json({{"event", "note"}, {"task", key_}, {"note", line}})
                                     .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                                     .c_str());
    std::fflush(stderr);
    return;
  }
  std::fprintf(stderr, "%s%s\n", task_.c_str(), line.c_str());
  std::fflush(stderr);
}

double ProgressPrinter::candidate_rate(const TuneEvent& e) {
  // Past the first candidate the rate leaves out the run's setup (worker,
  // inputs, references, the first batch's compile), which no later one repeats.
  if (e.done >= 2 && e.elapsed_s > e.first_done_s && e.first_done_s > 0) {
    return static_cast<double>(e.done - 1) / (e.elapsed_s - e.first_done_s);
  }
  return e.elapsed_s > 0 ? static_cast<double>(e.done) / e.elapsed_s : 0.0;
}

void ProgressPrinter::print_line(const std::string& text) {
  if (tty_) std::fprintf(stderr, "\r\033[K");
  std::fprintf(stderr, "%s%s\n", task_.c_str(), text.c_str());
  std::fflush(stderr);
}

void ProgressPrinter::print_phase(const TuneEvent& e) {
  char buf[160];
  if (e.phase == TuneEvent::Phase::kCompile) {
    std::snprintf(buf, sizeof buf, "compiling %zu candidates ahead (%zu compiled so far, %zu/%zu evaluated, %.1fs)",
                  e.batch, e.compiled, e.done, e.total, e.elapsed_s);
  } else {
    std::snprintf(buf, sizeof buf, "re-timing up to %zu finalists interleaved (%zu evaluated, %.1fs)", e.batch,
                  e.done, e.elapsed_s);
  }
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s%s", task_.c_str(), buf);
    std::fflush(stderr);
  } else {
    print_line(buf);
  }
}

void ProgressPrinter::operator()(const TuneEvent& e) {
  if (quiet_) return;
  if (format_ == Format::kJsonLines) {
    print_json(e);
    return;
  }
  std::string failures;
  for (const auto& [status, n] : e.failures) failures += " " + status + "=" + std::to_string(n);
  if (failures.empty()) failures = " none";
  const double rate = candidate_rate(e);
  const double eta = rate > 0 ? static_cast<double>(e.total - std::min(e.done, e.total)) / rate : 0.0;
  std::string best = e.best ? e.best->config + " " + std::to_string(e.best->timing.median_ms) + " ms" : "-";
  // The whole sweep: this task's estimate plus the tasks after it.
  std::string sweep;
  if (sweep_eta_) {
    if (auto left = sweep_eta_->remaining_s(e.elapsed_s, eta)) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "sweep eta %.0fs", *left);
      sweep = buf;
    }
  }
  if (e.kind == TuneEvent::Kind::kStart) {
    if (task_.empty()) {
      std::fprintf(stderr, "tuning %zu candidates (setting up the device, inputs and references)\n", e.total);
    } else {
      std::fprintf(stderr, "%s%s: tuning %zu candidates", task_.c_str(), key_.c_str(), e.total);
      // At a task's start only finished tasks give an estimate.
      if (auto left = sweep_eta_ ? sweep_eta_->remaining_at_start_s() : std::nullopt) {
        std::fprintf(stderr, " (sweep: %zu tasks left with this one, about %.0fs)", sweep_eta_->tasks_after_current() + 1,
                     *left);
      }
      std::fputc('\n', stderr);
    }
    return;
  }
  if (e.kind == TuneEvent::Kind::kPhase) {
    print_phase(e);
    return;
  }
  if (e.kind == TuneEvent::Kind::kLeaderChanged) {
    print_line("re-timing changed the leader to " + name_beside(*e.best, *e.replaced) + " from " +
               name_beside(*e.replaced, *e.best) + ": " + e.note);
    return;
  }
  if (e.kind == TuneEvent::Kind::kDone) {
    if (tty_) std::fputc('\n', stderr);
    return;
  }
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s[%zu/%zu] %.2f cand/s  best %s  failed:%s  eta %.0fs%s%s", task_.c_str(), e.done,
                 e.total, rate, best.c_str(), failures.c_str(), eta, sweep.empty() ? "" : "  ", sweep.c_str());
  } else {
    const auto& o = *e.outcome;
    // A failure's reason in full: its rerun line is at the end.
    const std::string what =
        o.status == CandidateStatus::kOk ? std::to_string(o.timing.median_ms) + " ms" : o.reason;
    std::fprintf(stderr, "%s[%zu/%zu] %s %s %s%s %s\n", task_.c_str(), e.done, e.total, o.template_name.c_str(),
                 o.config.c_str(), std::string(status_name(o.status)).c_str(), o.reused ? " (stored)" : "",
                 what.c_str());
  }
  std::fflush(stderr);
}

}  // namespace kforge::cli
