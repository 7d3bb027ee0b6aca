// Template selection shared by tune and sweep.
#include "tune_setup.hpp"

namespace kforge::cli {

std::vector<const TemplateSource*> select_templates(const TemplateCatalog& catalog, const std::string& op,
                                                    const std::string& backend, const std::string& only_template,
                                                    bool has_user_templates) {
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
  return out;
}

}  // namespace kforge::cli
