// Clocks of a GPU found by its place on the PCI bus rather than through its
// own runtime: how an OpenCL GPU gets NVML (NVIDIA) or ROCm SMI (AMD)
// readings. The OpenCL backend reads the address from cl_khr_pci_bus_info,
// else from the vendors' queries (cl_nv_device_attribute_query's bus and
// slot ids, cl_amd_device_attribute_query's topology), decoded here.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "core/result.hpp"
#include "runtime/profiling/clock_reader.hpp"

namespace kforge {

/// PCI vendor ids (CL_DEVICE_VENDOR_ID of a GPU).
inline constexpr std::uint32_t kPciVendorNvidia = 0x10de;
inline constexpr std::uint32_t kPciVendorAmd = 0x1002;

struct PciBusAddress {
  std::uint32_t domain = 0, bus = 0, device = 0, function = 0;
  /// NVML's bus id form: "00000000:17:00.0" (lower-case hex).
  std::string text() const;
  bool operator==(const PciBusAddress&) const = default;
};

/// From CL_DEVICE_PCI_BUS_ID_NV, CL_DEVICE_PCI_SLOT_ID_NV (device in bits
/// 7..3, function in 2..0) and CL_DEVICE_PCI_DOMAIN_ID_NV where the driver
/// has it (older ones do not: domain 0).
PciBusAddress pci_from_nv(std::uint32_t bus_id, std::uint32_t slot_id, std::optional<std::uint32_t> domain_id);

/// From CL_DEVICE_TOPOLOGY_AMD's 24 bytes (cl_device_topology_amd): a type
/// word, then for type 1 (PCIe) bus, device and function in bytes 21-23. The
/// query has no domain: 0. Nullopt for another size or type.
std::optional<PciBusAddress> pci_from_amd_topology(std::span<const unsigned char> bytes);

/// A reader for the GPU of PCI vendor `vendor_id` at `address`: NVML by bus
/// id for NVIDIA, ROCm SMI by domain, bus and device for AMD (its throttle
/// bits decoded for `arch`, e.g. "gfx90a"). `library` replaces the default
/// library of that vendor (tests). kNotFound for other vendors, without
/// the library, without a GPU at that address, or for AMD where kforge was
/// built without ROCm SMI: the caller then has no reader.
Result<std::unique_ptr<ClockReader>> open_pci_clock_reader(std::uint32_t vendor_id, const PciBusAddress& address,
                                                           const std::string& arch,
                                                           const std::string& library = {});

}  // namespace kforge
