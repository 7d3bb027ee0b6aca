// What `kforge tune` and `kforge sweep` share when they set up a Tuner run:
// which templates are tuned for a problem on a device's backend.
#pragma once

#include <string>
#include <vector>

#include "template_catalog.hpp"

namespace kforge::cli {

/// The templates of `op` that target `backend`, in name order; only the one
/// named `only_template` when it is not empty. With user template directories
/// (`has_user_templates`) and no `only_template`, the user templates alone
/// when any of them implements `op`. Empty when none matches.
std::vector<const TemplateSource*> select_templates(const TemplateCatalog& catalog, const std::string& op,
                                                    const std::string& backend, const std::string& only_template,
                                                    bool has_user_templates);

}  // namespace kforge::cli
