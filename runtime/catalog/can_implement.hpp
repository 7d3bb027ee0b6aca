// "Can this template run this problem on this device?", answered once for the
// tuner (which templates to tune) and the lookup (which entries to trust),
// before any configuration is looked at.
#pragma once

#include <string>

#include "core/result.hpp"
#include "generator/manifest.hpp"
#include "generator/operator.hpp"
#include "generator/problem.hpp"
#include "runtime/device/device_info.hpp"

namespace kforge {

/// What stands between a template and a problem on a device.
enum class ImplementGap {
  kNone,
  kWrongOperator,  ///< the template implements another operator
  kNotTargeted,    ///< the template does not target the device's backend
  kGuard,          ///< its architecture guard fails on the device
  kUnsupported,    ///< it does not declare the problem's dtype or layout
  kEnvelope,       ///< a problem-only constraint or envelope expression fails
};

struct Implementability {
  ImplementGap gap = ImplementGap::kNone;
  std::string reason;  ///< one line naming the template and what fails; empty when none
  bool ok() const { return gap == ImplementGap::kNone; }
  /// ok, or a kUnsupported error carrying the reason.
  Status status() const;
};

/// The template-level checks, in order: operator, backend target, arch
/// guard, dtype and layout, then the expressions that read no parameter.
/// An error only when such an expression cannot be evaluated (naming it).
Result<Implementability> can_implement(const TemplateManifest& m, const Operator& op, const Problem& problem,
                                       const DeviceInfo& device);

}  // namespace kforge
