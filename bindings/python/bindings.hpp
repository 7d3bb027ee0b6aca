// The parts of the _kforge extension module, one binder per concept; each
// adds its classes and functions to the module (module.cpp calls them).
#pragma once

#include <nanobind/nanobind.h>

#include <memory>

#include "runtime/device/backend.hpp"

namespace kforge::python {

/// An open device as Python holds it; lookups and tuning runs borrow it.
struct PyDevice {
  std::unique_ptr<Device> device;
};

void bind_devices(nanobind::module_& m);   // devices(), open_device(), Device, templates()
void bind_database(nanobind::module_& m);  // Database
void bind_lookup(nanobind::module_& m);    // Lookup, Selection, Kernel
void bind_tune(nanobind::module_& m);      // tune(), sweep(), the tuner's worker entry
void bind_report(nanobind::module_& m);    // export_tuning(), report_html()

}  // namespace kforge::python
