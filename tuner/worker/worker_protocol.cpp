// Serialization and framing of the tuner <-> worker messages.
#include "tuner/worker/worker_protocol.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <limits>
#include <utility>

#include "core/bounded_json.hpp"
#include "generator/problem_json.hpp"

namespace kforge {

namespace {

/// A number field; JSON has no NaN (nlohmann writes it as null), so null reads back as NaN.
double number(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return 0.0;
  if (it->is_null()) return std::numeric_limits<double>::quiet_NaN();
  return it->get<double>();
}

/// j[key] as T where it is an integer T holds, else `fallback`: nlohmann
/// reads a float into an integer by a plain cast, undefined out of range.
template <typename T>
T integer_or(const nlohmann::json& j, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return fallback;
  if (it->is_number_unsigned()) {
    const auto v = it->get<std::uint64_t>();
    return v <= static_cast<std::uint64_t>(std::numeric_limits<T>::max()) ? static_cast<T>(v) : fallback;
  }
  const auto v = it->get<std::int64_t>();
  return std::in_range<T>(v) ? static_cast<T>(v) : fallback;
}

}  // namespace

nlohmann::json to_json(const std::vector<CandidateRef>& refs) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& c : refs) {
    nlohmann::json j = {{"template", c.template_name}, {"config", c.config}};
    if (c.group >= 0) j["group"] = c.group;
    if (c.build_only) j["build_only"] = true;
    list.push_back(std::move(j));
  }
  return list;
}

std::vector<CandidateRef> refs_from_json(const nlohmann::json& list) {
  std::vector<CandidateRef> refs;
  if (!list.is_array()) return refs;
  for (const auto& c : list) {
    try {  // an entry that does not read back is left out
      refs.push_back({c.value("template", ""), c.value("config", ""), integer_or(c, "group", -1),
                      c.value("build_only", false)});
    } catch (const nlohmann::json::exception&) {
    }
  }
  return refs;
}

nlohmann::json to_json(const TimingStats& t) {
  return {{"median_ms", t.median_ms}, {"p20_ms", t.p20_ms},   {"p80_ms", t.p80_ms},
          {"min_ms", t.min_ms},       {"max_ms", t.max_ms},   {"count", t.count},
          {"samples_ms", t.samples_ms},
          {"ci", {{"low_ms", t.ci.low_ms}, {"high_ms", t.ci.high_ms}, {"coverage", t.ci.coverage}}},
          {"stop", std::string(name(t.stop))},           {"clocks", t.clocks.to_json()}};
}

namespace {

TimingStats timing_fields(const nlohmann::json& j) {
  TimingStats t;
  t.median_ms = number(j, "median_ms");
  t.p20_ms = number(j, "p20_ms");
  t.p80_ms = number(j, "p80_ms");
  t.min_ms = number(j, "min_ms");
  t.max_ms = number(j, "max_ms");
  t.count = integer_or(j, "count", std::int64_t{0});
  for (const auto& v : j.value("samples_ms", nlohmann::json::array())) {
    t.samples_ms.push_back(v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>());
  }
  if (j.contains("ci")) {
    t.ci.low_ms = number(j["ci"], "low_ms");
    t.ci.high_ms = number(j["ci"], "high_ms");
    t.ci.coverage = number(j["ci"], "coverage");
  }
  t.stop = timing_stop_named(j.value("stop", std::string())).value_or(TimingStop::kNone);
  if (j.contains("clocks")) t.clocks = ClockRecord::from_json(j["clocks"]);
  return t;
}

}  // namespace

TimingStats timing_from_json(const nlohmann::json& j) {
  try {
    return timing_fields(j);
  } catch (const nlohmann::json::exception&) {
    return {};  // unreadable: no samples, as if never timed
  }
}

nlohmann::json to_json(const Evaluation& e) {
  return {{"status", status_name(e.status)}, {"reason", e.reason},           {"timing", to_json(e.timing)},
          {"error_norm", e.error_norm},      {"error_ratio", e.error_ratio}, {"compile_ms", e.compile_ms},
          {"cache_hit", e.cache_hit},        {"compile_log", e.compile_log}, {"resources", e.resources},
          {"compile_s", e.compile_s},        {"validate_s", e.validate_s},   {"measure_s", e.measure_s},
          {"compiled_ahead", e.compiled_ahead},
          {"compiled_alone", e.compiled_alone},
          {"untimed_ms", e.untimed_ms}};
}

namespace {

Evaluation evaluation_fields(const nlohmann::json& j) {
  Evaluation e;
  e.status = parse_status(j.value("status", std::string("crash"))).value_or(CandidateStatus::kCrash);
  e.reason = j.value("reason", std::string());
  if (j.contains("timing")) e.timing = timing_fields(j["timing"]);
  e.error_norm = number(j, "error_norm");
  e.error_ratio = number(j, "error_ratio");
  e.compile_ms = number(j, "compile_ms");
  e.cache_hit = j.value("cache_hit", false);
  e.compiled_ahead = j.value("compiled_ahead", false);
  e.compiled_alone = j.value("compiled_alone", false);
  e.compile_log = j.value("compile_log", std::string());
  e.resources = j.contains("resources") ? j["resources"] : nlohmann::json();
  e.compile_s = number(j, "compile_s");
  e.validate_s = number(j, "validate_s");
  e.measure_s = number(j, "measure_s");
  if (j.contains("untimed_ms") && j["untimed_ms"].is_array()) {
    for (const auto& ms : j["untimed_ms"]) {
      if (ms.is_number()) e.untimed_ms.push_back(ms.get<double>());
    }
  }
  return e;
}

}  // namespace

Evaluation evaluation_from_json(const nlohmann::json& j) {
  try {
    return evaluation_fields(j);
  } catch (const nlohmann::json::exception& ex) {
    // Workers write these with to_json: one that does not read back is a
    // worker gone wrong, which costs its candidate only.
    Evaluation bad;
    bad.status = CandidateStatus::kCrash;
    bad.reason = std::string("the worker's evaluation message does not read back: ") + ex.what();
    return bad;
  }
}

MeasurementProtocol protocol_from_json(const nlohmann::json& j) {
  MeasurementProtocol p;
  p.warmup = integer_or(j, "warmup", p.warmup);
  p.min_reps = integer_or(j, "min_reps", p.min_reps);
  p.max_reps = integer_or(j, "max_reps", p.max_reps);
  p.budget_ms = j.value("budget_ms", p.budget_ms);
  p.flush_cache = j.value("flush_cache", p.flush_cache);
  p.ci_rel_width = j.value("ci_rel_width", p.ci_rel_width);
  p.cut_ratio = j.value("cut_ratio", p.cut_ratio);
  p.cut_after = integer_or(j, "cut_after", p.cut_after);
  p.stop_outside_window = j.value("stop_outside_window", p.stop_outside_window);
  p.finalists = integer_or(j, "finalists", p.finalists);
  p.finalist_window = j.value("finalist_window", p.finalist_window);
  p.max_finalists = integer_or(j, "max_finalists", p.max_finalists);
  p.finalist_rounds = integer_or(j, "finalist_rounds", p.finalist_rounds);
  p.finalist_race_after = integer_or(j, "finalist_race_after", p.finalist_race_after);
  p.finalist_retimings = integer_or(j, "finalist_retimings", p.finalist_retimings);
  p.retime_load_share = j.value("retime_load_share", p.retime_load_share);
  return p;
}

nlohmann::json to_json(const RunnerSetup& s) {
  return {{"device", s.device_selector},
          {"problem", problem_to_json(s.problem)},
          {"templates", s.template_origins},
          {"workload_seed", s.workload_seed},
          {"protocol", s.protocol.to_json()},
          {"cache_dir", s.cache_dir},
          {"compile_threads", s.pipeline.threads},
          {"compile_overlap", s.pipeline.overlap},
          {"combine_programs", s.pipeline.combine},
          {"code_generator", s.code_generator},
          {"reference_dir", s.reference_dir},
          {"database", s.database}};
}

Result<RunnerSetup> setup_from_json(const nlohmann::json& j) {
  try {
    RunnerSetup s;
    s.device_selector = j.at("device").get<std::string>();
    KF_TRY_ASSIGN(problem, problem_from_json(j.at("problem"), "worker setup"));
    s.problem = std::move(problem);
    s.template_origins = j.at("templates").get<std::vector<std::string>>();
    const auto& seed = j.at("workload_seed");
    if (!seed.is_number_integer() || (!seed.is_number_unsigned() && seed.get<std::int64_t>() < 0))
      return Error::bad_input("worker setup: workload_seed: not an unsigned integer: " + seed.dump());
    s.workload_seed = j["workload_seed"].get<std::uint64_t>();
    s.protocol = protocol_from_json(j.at("protocol"));
    s.cache_dir = j.value("cache_dir", std::string());
    s.pipeline.threads = integer_or(j, "compile_threads", 0);  // 0: the runner counts the cores
    s.pipeline.overlap = j.value("compile_overlap", false);
    s.pipeline.combine = j.value("combine_programs", false);
    s.code_generator = j.value("code_generator", false);
    s.reference_dir = j.value("reference_dir", std::string());
    s.database = j.value("database", std::string());
    return s;
  } catch (const nlohmann::json::exception& e) {
    return Error::bad_input(std::string("worker setup: ") + e.what());
  }
}

MessageChannel::~MessageChannel() {
  if (fd_ >= 0) close(fd_);
}

Status MessageChannel::send(const nlohmann::json& message) {
  const std::string line = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    ssize_t n = write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error{ErrorCode::kInternal, "worker channel: write failed", std::strerror(errno)};
    done += static_cast<std::size_t>(n);
  }
  return ok_status();
}

MessageChannel::Wait MessageChannel::receive(std::chrono::steady_clock::time_point deadline,
                                             nlohmann::json& message) {
  using namespace std::chrono;
  for (;;) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      auto parsed = parse_json_bounded(line, "worker message");
      if (!parsed.ok()) return Wait::kClosed;  // a garbled peer is as good as gone
      message = std::move(parsed).value();
      return Wait::kMessage;
    }
    const auto left = duration_cast<milliseconds>(deadline - steady_clock::now()).count();
    if (left <= 0) return Wait::kTimedOut;
    pollfd pfd{fd_, POLLIN, 0};
    int r = poll(&pfd, 1, static_cast<int>(std::min<long long>(left, INT_MAX)));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Wait::kClosed;
    if (r == 0) return Wait::kTimedOut;
    char chunk[65536];
    ssize_t n = read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Wait::kClosed;
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

MessageChannel::Wait MessageChannel::receive(nlohmann::json& message) {
  return receive(std::chrono::steady_clock::time_point::max(), message);
}

}  // namespace kforge
