// Stop conditions and their combinations.
#include "tuner/search/stop_condition.hpp"

namespace kforge {

namespace {
std::string fmt_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", s);
  return buf;
}
}  // namespace

StopCondition::StopCondition() : check_([](const SearchProgress&) { return std::optional<std::string>(); }) {}

StopCondition StopCondition::max_evaluations(std::size_t n) {
  if (n == 0) return StopCondition();
  return StopCondition([n](const SearchProgress& p) -> std::optional<std::string> {
    if (p.evaluations >= n) return std::to_string(n) + " evaluations";
    return std::nullopt;
  });
}

StopCondition StopCondition::time_budget(double seconds) {
  if (seconds <= 0) return StopCondition();
  return StopCondition([seconds](const SearchProgress& p) -> std::optional<std::string> {
    if (p.elapsed_s >= seconds) return "time budget of " + fmt_seconds(seconds);
    return std::nullopt;
  });
}

StopCondition StopCondition::no_improvement(std::size_t n) {
  if (n == 0) return StopCondition();
  return StopCondition([n](const SearchProgress& p) -> std::optional<std::string> {
    if (p.since_improvement >= n) return "no improvement in " + std::to_string(n) + " evaluations";
    return std::nullopt;
  });
}

StopCondition StopCondition::operator|(const StopCondition& other) const {
  return StopCondition([a = check_, b = other.check_](const SearchProgress& p) {
    if (auto r = a(p)) return r;
    return b(p);
  });
}

StopCondition StopCondition::operator&(const StopCondition& other) const {
  return StopCondition([a = check_, b = other.check_](const SearchProgress& p) -> std::optional<std::string> {
    auto ra = a(p);
    if (!ra) return std::nullopt;
    auto rb = b(p);
    if (!rb) return std::nullopt;
    return *ra + " and " + *rb;
  });
}

}  // namespace kforge
