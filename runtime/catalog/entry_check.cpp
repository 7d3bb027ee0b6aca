// The usability rules of one (template, configuration) entry.
#include "runtime/catalog/entry_check.hpp"

#include "core/printable.hpp"
#include "generator/search_space.hpp"
#include "runtime/catalog/can_implement.hpp"
#include "templates/builtin_templates.hpp"

namespace kforge {

std::string_view verdict_name(EntryVerdict v) {
  switch (v) {
    case EntryVerdict::kUsable: return "usable";
    case EntryVerdict::kUnknownTemplate: return "unknown_template";
    case EntryVerdict::kWrongOperator: return "wrong_operator";
    case EntryVerdict::kStale: return "stale";
    case EntryVerdict::kInvalid: return "invalid";
    case EntryVerdict::kGuard: return "guard";
    case EntryVerdict::kUnsupported: return "unsupported";
    case EntryVerdict::kNotValid: return "not_valid";
    case EntryVerdict::kUnavailable:
      return "unavailable";
  }
  return "unknown";
}

EntryChecker::EntryChecker(const TemplateCatalog& catalog, const DeviceInfo& device)
    : catalog_(catalog), device_(device) {
  const std::string_view prelude = prelude_text(device_.backend);
  for (const auto& t : catalog_.all()) hashes_.emplace(t.manifest.name, t.hash(prelude));
}

const std::string& EntryChecker::current_hash(std::string_view template_name) const {
  static const std::string kNone;
  auto it = hashes_.find(template_name);
  return it == hashes_.end() ? kNone : it->second;
}

EntryCheck EntryChecker::check_stored(std::string_view template_name, std::string_view hash,
                                      std::string_view config) const {
  EntryCheck c;
  c.tpl = catalog_.find(template_name);
  if (c.tpl == nullptr) {
    c.verdict = EntryVerdict::kUnknownTemplate;
    c.reason = "template '" + printable(template_name) + "' is not known to this kforge";
    return c;
  }
  if (!c.tpl->library_unavailable.empty()) {
    c.verdict = EntryVerdict::kUnavailable;
    c.reason = c.tpl->library_unavailable;
    return c;
  }
  const std::string& current = current_hash(template_name);
  if (!hash.empty() && hash != current) {
    c.verdict = EntryVerdict::kStale;
    c.reason = "stale: recorded under template hash " + printable(hash) + ", current is " + current;
    return c;
  }
  Status declared = c.tpl->manifest.check_declared_name(config);
  if (!declared.ok()) {
    c.verdict = EntryVerdict::kInvalid;
    c.reason = "invalid configuration '" + printable(config) + "': " + declared.error().message;
  }
  return c;
}

EntryCheck EntryChecker::check(std::string_view template_name, std::string_view hash,
                               std::string_view config, const Problem& problem,
                               const Operator& op) const {
  EntryCheck c = check_stored(template_name, hash, config);
  if (!c.usable()) return c;
  const TemplateManifest& m = c.tpl->manifest;
  auto fail = [&](EntryVerdict v, std::string reason) {
    c.verdict = v;
    c.reason = std::move(reason);
    return c;
  };
  auto fit = can_implement(m, op, problem, device_);
  if (!fit.ok()) return fail(EntryVerdict::kNotValid, fit.error().message);
  switch (fit->gap) {
    case ImplementGap::kNone: break;
    case ImplementGap::kWrongOperator: return fail(EntryVerdict::kWrongOperator, fit->reason);
    case ImplementGap::kNotTargeted: return fail(EntryVerdict::kGuard, fit->reason);
    case ImplementGap::kGuard: return fail(EntryVerdict::kGuard, "guard: " + fit->reason);
    case ImplementGap::kUnsupported: return fail(EntryVerdict::kUnsupported, fit->reason);
    case ImplementGap::kEnvelope:
      return fail(EntryVerdict::kNotValid, "not valid for this problem on this device (constraints or envelope): " +
                                               fit->reason);
  }
  const Config cfg = Config::parse(config).value();  // parsed by check_stored
  auto valid = SearchSpace(m, op, problem, device_.limits()).is_valid(cfg);
  if (!valid.ok()) return fail(EntryVerdict::kNotValid, valid.error().message);
  if (!*valid) {
    return fail(EntryVerdict::kNotValid,
                "not valid for this problem on this device (constraints or envelope)");
  }
  return c;
}

}  // namespace kforge
