// Python bindings: the devices kforge sees, opening one, and the templates.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings/python/bindings.hpp"
#include "bindings/python/json_to_python.hpp"
#include "bindings/python/python_errors.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "runtime/device/device_registry.hpp"

namespace nb = nanobind;

namespace kforge::python {

namespace {

nb::list device_list() {
  nb::list out;
  for (const DeviceInfo& info : list_devices()) out.append(json_to_python(info.to_json()));
  return out;
}

/// Each template: its name, operator, origin and its manifest as written.
nb::list template_list(const std::string& op, const std::vector<std::string>& template_dirs) {
  TemplateCatalog catalog = unwrap(TemplateCatalog::builtin());
  for (const auto& dir : template_dirs) unwrap(catalog.add_dir(dir));
  nb::list out;
  for (const TemplateSource& t : catalog.all()) {
    if (!op.empty() && t.manifest.op != op) continue;
    nb::dict d;
    d["name"] = t.manifest.name;
    d["op"] = t.manifest.op;
    d["origin"] = t.origin;
    d["manifest"] = json_to_python(nlohmann::json::parse(t.manifest_text));
    out.append(d);
  }
  return out;
}

}  // namespace

void bind_devices(nb::module_& m) {
  m.def("devices", &device_list, "Every device every enabled backend sees, as fingerprints (dicts).");
  nb::class_<PyDevice>(m, "Device")
      .def_prop_ro(
          "info", [](const PyDevice& d) { return json_to_python(d.device->info().to_json()); },
          "The device's fingerprint (backend, vendor, name, arch, limits, versions).")
      .def_prop_ro("selector", [](const PyDevice& d) { return d.device->info().selector; })
      .def_prop_ro("backend", [](const PyDevice& d) { return d.device->info().backend; })
      .def_prop_ro("name", [](const PyDevice& d) { return d.device->info().name; })
      .def("__repr__", [](const PyDevice& d) {
        return "<kforge.Device " + d.device->info().selector + " " + d.device->info().name + ">";
      });
  m.def(
      "open_device", [](const std::string& selector) { return PyDevice{unwrap(open_device(selector))}; },
      nb::arg("selector") = "auto",
      "Opens a device: \"auto\" (the best present), \"opencl:N\", \"cuda:N\", \"hip:N\", or text that "
      "matches "
      "a device's name, arch or key.");
  m.def("templates", &template_list, nb::arg("op") = "",
        nb::arg("template_dirs") = std::vector<std::string>{},
        "The built-in templates (and those of template_dirs), optionally of one operator.");
}

}  // namespace kforge::python
