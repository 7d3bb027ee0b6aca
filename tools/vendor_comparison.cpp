// kforge's best against the vendor's best, per tuned problem.
#include "vendor_comparison.hpp"

#include <map>
#include <utility>

namespace kforge {

nlohmann::json VendorComparison::to_json() const {
  auto side = [](const ComparedEntry& e) -> nlohmann::json {
    if (e.template_name.empty()) return nullptr;
    return {{"template", e.template_name}, {"config", e.config}, {"median_ms", e.median_ms}};
  };
  return {{"device_key", device_key},      {"problem", problem_key},       {"kernel_best", side(kernel)},
          {"library_best", side(library)}, {"kernel_over_library", ratio}, {"faster", faster}};
}

std::vector<VendorComparison> compare_vendor(const std::vector<WinnerRecord>& winners,
                                             const TemplateCatalog& catalog) {
  std::vector<VendorComparison> out;
  std::map<std::pair<std::string, std::string>, std::size_t> row_of;
  for (const WinnerRecord& w : winners) {
    auto [it, fresh] = row_of.emplace(std::pair{w.device_key, w.problem_key}, out.size());
    if (fresh) out.push_back({w.device_key, w.problem_key, {}, {}, 0, ""});
    VendorComparison& row = out[it->second];
    const TemplateSource* tpl = catalog.find(w.template_name);
    ComparedEntry& side = tpl && tpl->manifest.is_library() ? row.library : row.kernel;
    if (side.template_name.empty() || w.median_ms < side.median_ms)
      side = {w.template_name, w.config, w.median_ms};
  }
  for (VendorComparison& row : out) {
    if (row.kernel.template_name.empty() || row.library.template_name.empty() || row.library.median_ms <= 0)
      continue;
    row.ratio = row.kernel.median_ms / row.library.median_ms;
    row.faster = row.ratio > 1 ? "library" : "kernel";
  }
  return out;
}

}  // namespace kforge
