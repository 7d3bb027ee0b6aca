// Whether one (template, configuration) may be used: the rules shared by the
// lookup's selection chain and `kforge db verify`. A database is input, not
// code: every value is checked against the template's declarations before
// any source is generated from it.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "generator/operator.hpp"
#include "generator/problem.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "runtime/device/device_info.hpp"

namespace kforge {

/// Why an entry cannot be used; kUsable when it can.
enum class EntryVerdict {
  kUsable,
  kUnknownTemplate,  ///< no template of that name in the catalog
  kWrongOperator,    ///< the template implements another operator
  kStale,            ///< recorded under another hash of the template
  kInvalid,          ///< the configuration does not parse or is not declared (tampered)
  kGuard,            ///< the template does not target the backend, or its arch guard fails
  kUnsupported,      ///< dtype or layout not declared by the template
  kNotValid,         ///< a constraint or the envelope fails for this problem on this device
  kUnavailable,      ///< a library template whose library does not load here
};

std::string_view verdict_name(EntryVerdict v);  ///< "usable", "stale", "invalid", ...

struct EntryCheck {
  EntryVerdict verdict = EntryVerdict::kUsable;
  std::string reason;                  ///< one line, empty when usable
  const TemplateSource* tpl = nullptr;  ///< set unless kUnknownTemplate
  bool usable() const { return verdict == EntryVerdict::kUsable; }
};

/// Checks entries for one device (backend, architecture, limits). The
/// current hash of every template is computed once, at construction.
class EntryChecker {
 public:
  EntryChecker(const TemplateCatalog& catalog, const DeviceInfo& device);

  /// The checks that need no problem: template known, hash current (skipped
  /// when `hash` is empty, as for overrides), configuration declared.
  EntryCheck check_stored(std::string_view template_name, std::string_view hash,
                          std::string_view config) const;
  /// check_stored, then: implements `problem.op`, targets the backend and
  /// passes its architecture guard, declares the dtype and layout, and the
  /// configuration satisfies every constraint and the envelope for
  /// `problem` (normalized) on this device.
  EntryCheck check(std::string_view template_name, std::string_view hash, std::string_view config,
                   const Problem& problem, const Operator& op) const;
  /// The template's current hash for this device's backend ("" when unknown).
  const std::string& current_hash(std::string_view template_name) const;

 private:
  const TemplateCatalog& catalog_;
  DeviceInfo device_;
  std::map<std::string, std::string, std::less<>> hashes_;
};

}  // namespace kforge
