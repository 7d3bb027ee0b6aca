// An OpenCL device's fingerprint (DeviceInfo) from its platform and device
// queries, and the enumeration that numbers the devices "opencl:N".
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "runtime/device/device_info.hpp"
#include "runtime/profiling/pci_clock_reader.hpp"

namespace kforge::opencl {

/// DeviceInfo::compiler of a PoCL device.
inline constexpr const char* kPoclCompiler = "pocl";

struct ClDeviceRef {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
};

/// Every device of every platform, in platform then device order.
std::vector<ClDeviceRef> enumerate_devices();

/// The fingerprint of the device `ref`, selector "opencl:<index>".
DeviceInfo describe(const ClDeviceRef& ref, std::size_t index);

/// Where a GPU sits on the PCI bus: cl_khr_pci_bus_info, else the NVIDIA or
/// AMD query (pci_clock_reader.hpp); nullopt when the device tells none.
std::optional<PciBusAddress> device_pci_address(cl_device_id d, const std::string& extensions);

}  // namespace kforge::opencl
