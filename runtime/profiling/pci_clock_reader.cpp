#include "runtime/profiling/pci_clock_reader.hpp"

#include <cstdio>

#include "runtime/profiling/nvml_api.hpp"
#ifdef KFORGE_HAVE_ROCM_SMI
#include "runtime/profiling/rocm_smi_api.hpp"
#endif

namespace kforge {

std::string PciBusAddress::text() const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%08x:%02x:%02x.%x", domain, bus & 0xff, device & 0x1f, function & 0x7);
  return buf;
}

PciBusAddress pci_from_nv(std::uint32_t bus_id, std::uint32_t slot_id, std::optional<std::uint32_t> domain_id) {
  return PciBusAddress{domain_id.value_or(0), bus_id & 0xff, (slot_id >> 3) & 0x1f, slot_id & 0x7};
}

std::optional<PciBusAddress> pci_from_amd_topology(std::span<const unsigned char> bytes) {
  constexpr std::size_t kSize = 24;  // one cl_uint type word, 17 unused bytes, bus, device, function
  if (bytes.size() != kSize) return std::nullopt;
  const std::uint32_t type = static_cast<std::uint32_t>(bytes[0]) | static_cast<std::uint32_t>(bytes[1]) << 8 |
                             static_cast<std::uint32_t>(bytes[2]) << 16 | static_cast<std::uint32_t>(bytes[3]) << 24;
  if (type != 1) return std::nullopt;  // CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD
  return PciBusAddress{0, bytes[21], bytes[22], bytes[23]};
}

Result<std::unique_ptr<ClockReader>> open_pci_clock_reader(std::uint32_t vendor_id, const PciBusAddress& address,
                                                           const std::string& arch, const std::string& library) {
  if (vendor_id == kPciVendorNvidia) return nvml::open_nvml_clock_reader(address.text(), library);
  if (vendor_id == kPciVendorAmd) {
#ifdef KFORGE_HAVE_ROCM_SMI
    return rocm_smi::open_rocm_smi_clock_reader(rocm_smi::PciAddress{address.domain, address.bus, address.device},
                                                arch, library);
#else
    (void)arch;
    (void)library;
    return Error::not_found("clocks of the AMD GPU at " + address.text() +
                            ": kforge was built without ROCm SMI (KFORGE_ROCM_SMI_INCLUDE_DIR)");
#endif
  }
  char id[16];
  std::snprintf(id, sizeof id, "0x%04x", vendor_id);
  return Error::not_found("clocks of the GPU at " + address.text() + ": no clock library for PCI vendor " + id);
}

}  // namespace kforge
