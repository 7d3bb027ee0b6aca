// kforge's best against the vendor's best, per tuned problem.
#include "report/vendor_comparison.hpp"

#include <map>
#include <utility>

namespace kforge::report {

nlohmann::json VendorComparison::to_json() const {
  auto side = [](const ComparedEntry& e) -> nlohmann::json {
    if (e.template_name.empty()) return nullptr;
    return {{"template", e.template_name}, {"config", e.config}, {"median_ms", e.median_ms}};
  };
  return {{"device_key", device_key},      {"problem", problem_key},       {"kernel_best", side(kernel)},
          {"library_best", side(library)}, {"kernel_over_library", ratio}, {"faster", faster}};
}

std::vector<VendorComparison> compare_vendor(
    const std::vector<WinnerRecord>& winners,
    const std::function<bool(const std::string&, const std::string&)>& is_library) {
  std::vector<VendorComparison> out;
  std::map<std::pair<std::string, std::string>, std::size_t> row_of;
  for (const WinnerRecord& w : winners) {
    auto [it, fresh] = row_of.emplace(std::pair{w.device_key, w.problem_key}, out.size());
    if (fresh) out.push_back({w.device_key, w.problem_key, {}, {}, 0, ""});
    VendorComparison& row = out[it->second];
    ComparedEntry& side = is_library(w.template_name, w.template_hash) ? row.library : row.kernel;
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

std::vector<VendorComparison> compare_vendor(const std::vector<WinnerRecord>& winners,
                                             const TemplateCatalog& catalog) {
  return compare_vendor(winners, [&](const std::string& name, const std::string&) {
    const TemplateSource* tpl = catalog.find(name);
    return tpl && tpl->manifest.is_library();
  });
}

std::vector<VendorComparison> compare_vendor(const TuningSet& set) {
  return compare_vendor(set.winners, [&](const std::string& name, const std::string& hash) {
    const TemplateRecord* t = set.find_template(name, hash);
    if (!t) return false;
    const auto manifest = nlohmann::json::parse(t->manifest_json, nullptr, false);
    return manifest.is_object() && manifest.contains("library");
  });
}

std::vector<VendorComparison> with_library(std::vector<VendorComparison> rows) {
  std::erase_if(rows, [](const VendorComparison& v) { return v.library.template_name.empty(); });
  return rows;
}

}  // namespace kforge::report
