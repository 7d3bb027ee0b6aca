// What `kforge tune`, `kforge sweep` and the Python package share when they
// set up a Tuner run: which templates are tuned for a problem on a device's
// backend.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runtime/catalog/template_catalog.hpp"
#include "runtime/libraries/library_policy.hpp"

namespace kforge {

/// The templates of `op` that target `backend`, in name order; only the one
/// named `only_template` when it is not empty. With user template directories
/// (`has_user_templates`) and no `only_template`, the user templates alone
/// when any of them implements `op`. Only those `policy` admits: library
/// templates compared (kept), forbidden or forced (docs/vendor-libraries.md);
/// without a policy, what $KFORGE_LIBRARY_<OP> says (a bad value: compare).
/// Empty when none matches.
std::vector<const TemplateSource*> select_templates(const TemplateCatalog& catalog, const std::string& op,
                                                    const std::string& backend,
                                                    const std::string& only_template, bool has_user_templates,
                                                    std::optional<LibraryPolicy> policy = std::nullopt);

/// The policy for `op`: `flag` ("compare", "forbid", "force") when given,
/// else $KFORGE_LIBRARY_<OP>, else compare. A bad value is kBadInput naming
/// `field`, where the flag came from.
Result<LibraryPolicy> library_policy_for(const std::string& op, const std::string& flag,
                                         const std::string& field = "--library");

}  // namespace kforge
