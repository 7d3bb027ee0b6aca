// The template-level answer shared by the tuner and the lookup's EntryChecker.
#include "runtime/catalog/can_implement.hpp"

#include "generator/search_space.hpp"
#include "runtime/catalog/arch_guard.hpp"

namespace kforge {

Status Implementability::status() const {
  if (ok()) return ok_status();
  return Error{ErrorCode::kUnsupported, reason, {}};
}

Result<Implementability> can_implement(const TemplateManifest& m, const Operator& op, const Problem& problem,
                                       const DeviceInfo& device) {
  auto gap = [](ImplementGap g, std::string reason) { return Implementability{g, std::move(reason)}; };
  if (m.op != problem.op) {
    return gap(ImplementGap::kWrongOperator, m.name + " implements " + m.op + ", not " + problem.op);
  }
  if (!m.supports_target(device.backend)) {
    return gap(ImplementGap::kNotTargeted, m.name + " does not target " + device.backend);
  }
  if (auto guard = check_arch_guard(m, device.backend, device.arch); !guard.ok()) {
    return gap(ImplementGap::kGuard, guard.error().message);
  }
  if (!m.supports(problem.dtype) || !m.supports(problem.layout)) {
    return gap(
        ImplementGap::kUnsupported,
        m.name + " does not declare " + std::string(dtype_name(problem.dtype)) + " " + problem.layout.name());
  }
  KF_TRY_ASSIGN(failed, SearchSpace(m, op, problem, device.limits()).failed_problem_check());
  if (failed != nullptr) {
    return gap(ImplementGap::kEnvelope,
               m.name + ": " + failed->field + " '" + failed->expr.text() + "' fails for " + problem.key());
  }
  return Implementability{};
}

}  // namespace kforge
