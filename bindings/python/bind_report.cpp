// Python bindings: exports and the HTML report of a tuning database, as
// `kforge export` and `kforge report` make them (report/).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings/python/bindings.hpp"
#include "bindings/python/python_errors.hpp"
#include "db/tuning_set.hpp"
#include "report/device_ceilings.hpp"
#include "report/export_binaries.hpp"
#include "report/export_tuning.hpp"
#include "report/report_renderer.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "runtime/kinds/binary_cache.hpp"
#include "tuner/build_version.hpp"

namespace nb = nanobind;

namespace kforge::python {

namespace {

using OptionalText = std::optional<std::string>;

/// The built-in templates and those of `dirs`; first, since it registers
/// the operators the directories declare (their costs, for throughput).
TemplateCatalog catalog_with(const std::vector<std::string>& dirs) {
  TemplateCatalog catalog = unwrap(TemplateCatalog::builtin());
  for (const auto& dir : dirs) unwrap(catalog.add_dir(dir));
  return catalog;
}

TuningFilter filter_of(const OptionalText& device, const OptionalText& op, const OptionalText& dtype,
                       const OptionalText& layout, const OptionalText& problem, bool all_results) {
  TuningFilter f;
  f.device = device;
  f.op = op;
  f.dtype = dtype;
  f.layout = layout;
  f.problem_key = problem;
  f.all_results = all_results;
  return f;
}

nb::dict export_text(const std::string& source, const std::string& format, const OptionalText& device,
                     const OptionalText& op, const OptionalText& dtype, const OptionalText& layout,
                     const OptionalText& problem, bool all_results, bool include_stale, const std::string& ns,
                     const std::vector<std::string>& template_dirs, const OptionalText& binaries,
                     const OptionalText& cache_dir) {
  const TemplateCatalog catalog = catalog_with(template_dirs);
  report::ExportRequest request;
  request.format = format;
  request.filter = filter_of(device, op, dtype, layout, problem, all_results);
  request.include_stale = include_stale;
  request.ns = ns;
  request.exported_by = version_line();
  report::ExportOutput out;
  std::optional<report::BinaryExport> copied;
  {
    nb::gil_scoped_release release;
    out = unwrap(report::export_tuning(source, request, catalog));
    if (binaries)
      copied = unwrap(report::export_binaries(out.set, cache_dir.value_or(BinaryCache::default_dir()), *binaries));
  }
  nb::dict d;
  if (copied) {
    nb::dict b;
    b["copied"] = copied->copied;
    b["missing"] = copied->missing;
    d["binaries"] = b;
  }
  d["text"] = out.text;
  d["stale_left_out"] = out.stale_left_out;
  d["skipped"] = out.skipped;
  d["holds_all_results"] = out.set.filter.all_results;
  return d;
}

std::string report_html(const std::string& source, const OptionalText& device, const OptionalText& op,
                        const OptionalText& dtype, const OptionalText& layout, const OptionalText& problem,
                        const OptionalText& title, const OptionalText& ceilings,
                        const std::vector<std::string>& template_dirs) {
  (void)catalog_with(template_dirs);
  report::ReportOptions options;
  if (title) options.title = *title;
  if (ceilings) options.ceilings = unwrap(report::load_ceilings(*ceilings));
  nb::gil_scoped_release release;
  const TuningSet set = unwrap(load_tuning_set(source, filter_of(device, op, dtype, layout, problem, true)));
  return report::render_report_html(set, options);
}

}  // namespace

void bind_report(nb::module_& m) {
  m.def("export_tuning", &export_text, nb::arg("source"), nb::arg("format"), nb::arg("device").none(),
        nb::arg("op").none(), nb::arg("dtype").none(), nb::arg("layout").none(), nb::arg("problem").none(),
        nb::arg("all_results"), nb::arg("include_stale"), nb::arg("namespace"), nb::arg("template_dirs"),
        nb::arg("binaries").none(), nb::arg("cache_dir").none(),
        "An export of a database or JSON export (docs/export.md): {text, stale_left_out, skipped, holds_all_results},\n"
        "with {binaries: {copied, missing}} where the winners' binaries were copied.");
  m.def("report_html", &report_html, nb::arg("source"), nb::arg("device").none(), nb::arg("op").none(),
        nb::arg("dtype").none(), nb::arg("layout").none(), nb::arg("problem").none(), nb::arg("title").none(),
        nb::arg("ceilings").none(), nb::arg("template_dirs"),
        "The self-contained HTML report of a database or JSON export (docs/report.md).");
}

}  // namespace kforge::python
