// `kforge capabilities`' model: per target (backend + architecture), per
// operator, which templates apply, what they support, which architecture
// guards exclude them and what falls back, and the database's evidence that
// they were tuned and validated there. Derived from the template catalog
// and the database only. Format: docs/capabilities.md.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/tuning_set.hpp"
#include "report/device_ceilings.hpp"
#include "runtime/catalog/template_catalog.hpp"

namespace kforge::report {

/// Bump when a field of the capabilities JSON changes; docs/capabilities.md
/// and tests/data/golden/capabilities.json follow.
inline constexpr int kCapabilitiesSchemaVersion = 4;

struct CapabilityTarget {
  std::string backend;  ///< cuda, hip, opencl
  std::string arch;     ///< sm_90, gfx942, x86_64-haswell; empty: any device of the backend
  std::vector<std::string> origins;  ///< "database", "guard", "--target"
  std::string name() const { return arch.empty() ? backend : backend + ":" + arch; }
};

/// Parses "cuda:sm_90", "hip:gfx90a", "opencl" or "opencl:ARCH"; errors name the text.
Result<CapabilityTarget> parse_target(const std::string& text);

struct CapabilitiesRequest {
  const TemplateCatalog* catalog = nullptr;
  std::vector<std::string> only_templates;  ///< empty: every template of the catalog
  std::string op;                           ///< empty: every operator
  std::vector<CapabilityTarget> extra_targets;
  const TuningSet* evidence = nullptr;      ///< every result of the database; nullptr: none
  std::string evidence_source;              ///< file name for the output
  std::vector<DeviceCeilings> ceilings;     ///< user peaks for the regimes, before the built-in table
};

/// The model as JSON (the `--json` output). Targets come from the database's
/// devices, from the architectures the templates' guards name, and from
/// extra_targets; a backend some template targets but no target names gets a
/// target without an architecture.
Result<nlohmann::ordered_json> describe_capabilities(const CapabilitiesRequest& request);

/// The same model for people.
std::string render_capabilities_markdown(const nlohmann::ordered_json& model);

}  // namespace kforge::report
