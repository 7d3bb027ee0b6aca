// The tuning summary's finalist queries and its JSON rendering.
#include "tuner/tune_summary.hpp"

#include <algorithm>

namespace kforge {

const FinalistTiming* winning_finalist(const TuneSummary& s) {
  if (!s.winner) return nullptr;
  for (const auto& f : s.finalists) {
    if (f.outcome.template_name == s.winner->template_name && f.outcome.config == s.winner->config) return &f;
  }
  return nullptr;
}

std::vector<const FinalistTiming*> within_noise_of_winner(const TuneSummary& s) {
  std::vector<const FinalistTiming*> out;
  const FinalistTiming* won = winning_finalist(s);
  if (!won) return out;
  for (const auto& f : s.finalists) {
    // One the race dropped lost every round to the leader: told apart.
    if (&f != won && f.interleaved.stop != TimingStop::kRaced && within_noise(f.interleaved, won->interleaved)) {
      out.push_back(&f);
    }
  }
  return out;
}

namespace {

nlohmann::json outcome_json(const CandidateOutcome& o, double flops) {
  nlohmann::json j = {
      {"template", o.template_name},     {"config", o.config},        {"status", status_name(o.status)},
      {"median_ms", o.timing.median_ms}, {"p20_ms", o.timing.p20_ms}, {"p80_ms", o.timing.p80_ms},
      {"min_ms", o.timing.min_ms},       {"count", o.timing.count},   {"error_norm", o.error_norm}};
  if (o.timing.median_ms > 0) j["gflops"] = flops / (o.timing.median_ms * 1e-3) / 1e9;
  if (!o.reason.empty()) j["reason"] = o.reason;
  if (!o.timing.clocks.empty()) j["clocks"] = o.timing.clocks.to_json();
  return j;
}

nlohmann::json search_notes_json(const SearchNotes& n) {
  nlohmann::json skipped = nlohmann::json::array(), partial = nlohmann::json::array(),
                 warm = nlohmann::json::array();
  for (const auto& [name, reason] : n.skipped_templates)
    skipped.push_back({{"template", name}, {"reason", reason}});
  for (const auto& [name, note] : n.partial_spaces)
    partial.push_back({{"template", name}, {"tuned_over", note}});
  for (const auto& w : n.warm_starts) {
    warm.push_back({{"template", w.template_name},
                    {"config", w.config},
                    {"from_problem", w.from_problem},
                    {"log2_distance", w.distance}});
  }
  return {{"skipped_templates", skipped}, {"partial_spaces", partial}, {"warm_starts", warm}};
}

nlohmann::json times_json(const PhaseTimes& t) {
  return {{"total", t.total_s},     {"compile", t.compile_s},     {"validate", t.validate_s},
          {"measure", t.measure_s}, {"finalists", t.finalists_s}, {"setup", t.setup_s}};
}

nlohmann::json pipeline_json(const PipelineCounters& p) {
  return {
      {"compile_overlap", p.compile_overlap},
      {"cache_hits", p.cache_hits},
      {"compiled_ahead", p.compiled_ahead},
      {"compiled_alone", p.compiled_alone},
      {"guessed_ahead", p.guessed_ahead},
      {"validated_ahead", p.validated_ahead},
      {"generated_ahead", p.generated_ahead},
      {"compiled_combined", p.compiled_combined},
      {"compile_ahead_stopped",
       p.compile_ahead_stopped.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.compile_ahead_stopped)}};
}

nlohmann::json worker_json(const WorkerCounters& w) {
  return {{"worker_restarts", w.restarts},
          {"references_reused", w.references_reused},
          {"code_generators", w.code_generators},
          {"generators_lost", w.generators_lost},
          {"generators_lost_running", w.generators_lost_running},
          {"shares_rebuilt", w.shares_rebuilt}};
}

/// Why timing stopped, over this run's ok candidates (docs/measurement.md, step 4).
nlohmann::json timing_stops_json(const std::vector<CandidateOutcome>& outcomes) {
  nlohmann::json stops = nlohmann::json::object();
  for (const auto& c : outcomes) {
    if (c.reused || c.status != CandidateStatus::kOk || c.timing.stop == TimingStop::kNone) continue;
    const std::string stop(name(c.timing.stop));
    stops[stop] = stops.value(stop, 0) + 1;
  }
  return stops;
}

nlohmann::json finalists_json(const TuneSummary& s) {
  nlohmann::json j = nlohmann::json::array();
  const FinalistTiming* won = winning_finalist(s);
  const auto tied = within_noise_of_winner(s);
  for (const auto& f : s.finalists) {
    j.push_back({{"template", f.outcome.template_name},
                 {"config", f.outcome.config},
                 {"search_median_ms", f.outcome.timing.median_ms},
                 {"interleaved_median_ms", f.interleaved.median_ms},
                 {"interleaved_count", f.interleaved.count},
                 {"interleaved_ci_ms", {f.interleaved.ci.low_ms, f.interleaved.ci.high_ms}},
                 {"interleaved_ci_coverage", f.interleaved.ci.coverage},
                 {"winner", &f == won},
                 {"within_noise_of_winner", std::find(tied.begin(), tied.end(), &f) != tied.end()},
                 {"interleaved_stop", std::string(name(f.interleaved.stop))},
                 {"interleaved_clocks", f.interleaved.clocks.to_json()}});
  }
  return j;
}

}  // namespace

nlohmann::json to_json(const TuneSummary& s, double flops) {
  nlohmann::json j = {{"schema_version", kTuneSummarySchemaVersion},
                      {"sweep_id", s.sweep_id},
                      {"evaluated", s.counts.evaluated + s.counts.reused},
                      {"evaluated_now", s.counts.evaluated},
                      {"reused", s.counts.reused},
                      {"failed", s.counts.failed},
                      {"validated", s.counts.validated},
                      {"stop_reason", s.stop_reason},
                      {"retimings", s.retiming.retimings},
                      {"retiming_note", s.retiming.note},
                      {"retimed_for_load", s.retiming.retimed_for_load},
                      {"time_s", times_json(s.times)},
                      {"timing_stops", timing_stops_json(s.outcomes)},
                      {"finalists", finalists_json(s)},
                      {"winner", nullptr},
                      {"default", nullptr}};
  j.update(search_notes_json(s.search));
  j.update(pipeline_json(s.pipeline));
  j.update(worker_json(s.worker));
  if (s.winner) j["winner"] = outcome_json(*s.winner, flops);
  if (s.default_result) j["default"] = outcome_json(*s.default_result, flops);
  if (s.winner && s.default_result && s.default_result->status == CandidateStatus::kOk)
    j["speedup_vs_default"] = s.default_result->timing.median_ms / s.winner->timing.median_ms;
  return j;
}

}  // namespace kforge
