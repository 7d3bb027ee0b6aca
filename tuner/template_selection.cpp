// Template selection shared by tune, sweep and the Python package.
#include "tuner/template_selection.hpp"

#include "core/printable.hpp"

namespace kforge {

std::vector<const TemplateSource*> select_templates(const TemplateCatalog& catalog, const std::string& op,
                                                    const std::string& backend,
                                                    const std::string& only_template, bool has_user_templates,
                                                    std::optional<LibraryPolicy> policy) {
  if (!policy) {
    auto from_env = library_policy_from_env(op);
    policy = from_env.ok() ? *from_env : LibraryPolicy::kCompare;
  }
  std::vector<const TemplateSource*> out;
  for (const auto* tpl : catalog.for_op(op, backend)) {
    if (only_template.empty() || tpl->manifest.name == only_template) out.push_back(tpl);
  }
  // With a user template, it alone is tuned unless only_template says otherwise.
  if (has_user_templates && only_template.empty()) {
    std::vector<const TemplateSource*> user;
    for (const auto* tpl : out)
      if (tpl->origin.rfind("builtin:", 0) != 0) user.push_back(tpl);
    if (!user.empty()) out = user;
  }
  std::erase_if(out, [&](const TemplateSource* t) { return !policy_admits(*policy, t->manifest); });
  return out;
}

Result<LibraryPolicy> library_policy_for(const std::string& op, const std::string& flag, const std::string& field) {
  if (flag.empty()) return library_policy_from_env(op);
  if (auto p = parse_library_policy(flag)) return *p;
  return Error::bad_input(field + ": '" + printable(flag) + "': expected compare, forbid or force");
}

}  // namespace kforge
