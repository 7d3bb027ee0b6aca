// Problems, throughput and template state derived from stored tuning rows.
#include "report/tuning_facts.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/bounded_json.hpp"
#include "generator/operator.hpp"
#include "templates/builtin_templates.hpp"

namespace kforge::report {

std::optional<Problem> problem_of(const ProblemRecord& rec) {
  const Operator* op = find_operator(rec.op);
  if (!op) return std::nullopt;
  Problem p;
  p.op = rec.op;
  const auto dims = parse_json_bounded(rec.dims_json, "problems.dims_json");
  if (!dims.ok() || !dims->is_object()) return std::nullopt;
  for (const auto& item : dims->items()) {
    if (!item.value().is_number_integer()) return std::nullopt;
    p.dims[item.key()] = item.value().get<std::int64_t>();
  }
  const auto dtype = parse_dtype(rec.dtype);
  const auto layout = parse_layout(rec.layout);
  if (!dtype || !layout) return std::nullopt;
  p.dtype = *dtype;
  p.layout = *layout;
  auto normalized = op->normalize(p);
  if (!normalized.ok()) return std::nullopt;
  return *normalized;
}

std::optional<ProblemCost> cost_of(const ProblemRecord& rec) {
  auto p = problem_of(rec);
  if (!p) return std::nullopt;
  const Operator* op = find_operator(p->op);
  return ProblemCost{op->flops(*p), op->bytes(*p)};
}

std::optional<Throughput> throughput_of(const ProblemRecord& rec, double ms) {
  if (!(ms > 0) || !std::isfinite(ms)) return std::nullopt;
  const auto cost = cost_of(rec);
  if (!cost) return std::nullopt;
  const double flops = cost->flops, bytes = cost->bytes;
  Throughput t;
  t.gflops = flops / (ms * 1e-3) / 1e9;
  t.gbps = bytes / (ms * 1e-3) / 1e9;
  t.intensity = bytes > 0 ? flops / bytes : 0;
  return t;
}

std::string template_state(const TemplateCatalog& catalog, const std::string& name, const std::string& hash,
                           std::string_view backend) {
  const TemplateSource* t = catalog.find(name);
  if (!t || !t->manifest.supports_target(backend)) return "unknown";
  // The tuner hashes with the backend's prelude, empty or not; so does this.
  return t->hash(prelude_text(backend)) == hash ? "current" : "stale";
}

std::string exact_number(double v) {
  if (!std::isfinite(v)) return "";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string();
}

std::string short_number(double v, int significant) {
  if (!std::isfinite(v)) return "-";
  if (v == 0) return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  char buf[64];
  if (magnitude >= 15 || magnitude < -6) {
    std::snprintf(buf, sizeof buf, "%.*e", significant - 1, v);
  } else {
    const int decimals = std::max(0, significant - 1 - magnitude);
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  }
  return buf;
}

}  // namespace kforge::report
