// Clocks of an OpenCL GPU: its PCI address decoded from the vendors' OpenCL
// queries, and the NVIDIA reader found by that address through a fake
// libnvidia-ml (fake_nvml.cpp). The AMD side is in rocm_smi_clock_reader_test.
#include <catch2/catch.hpp>

#include <array>

#include "runtime/profiling/pci_clock_reader.hpp"
#include "tests/test_util.hpp"

using namespace kforge;

TEST_CASE("PCI addresses decode from the NVIDIA and AMD OpenCL queries", "[clocks][unit]") {
  // Slot id: device in bits 7..3, function in 2..0.
  CHECK(pci_from_nv(0x17, 0x00, std::nullopt) == PciBusAddress{0, 0x17, 0, 0});
  CHECK(pci_from_nv(0xc3, 0x0b, 2) == PciBusAddress{2, 0xc3, 1, 3});
  CHECK(pci_from_nv(0x1c3, 0xf8, std::nullopt) == PciBusAddress{0, 0xc3, 0x1f, 0});

  std::array<unsigned char, 24> topology{};
  topology[0] = 1;  // CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD, little-endian
  topology[21] = 0xc3;
  topology[22] = 0x02;
  topology[23] = 0x01;
  CHECK(pci_from_amd_topology(topology) == PciBusAddress{0, 0xc3, 2, 1});
  topology[0] = 2;
  CHECK_FALSE(pci_from_amd_topology(topology));
  topology[0] = 1;
  CHECK_FALSE(pci_from_amd_topology(std::span<const unsigned char>(topology).first(20)));
}

TEST_CASE("a PCI address reads as NVML's bus id", "[clocks][unit]") {
  CHECK(PciBusAddress{0, 0x17, 0, 0}.text() == "00000000:17:00.0");
  CHECK(PciBusAddress{0x1, 0xc3, 0x1f, 7}.text() == "00000001:c3:1f.7");
}

TEST_CASE("an NVIDIA GPU is read through NVML by its PCI address", "[clocks][unit]") {
  test::ScopedScriptFile script("KFORGE_FAKE_NVML_SCRIPT",
                                "device GPU-0c1d2e3f 00000000:17:00.0\n"
                                "sample 1980 2619 45 350000 0\n");
  auto reader = open_pci_clock_reader(kPciVendorNvidia, {0, 0x17, 0, 0}, "sm_90", KFORGE_FAKE_NVML);
  REQUIRE(reader.ok());
  CHECK((*reader)->source() == "nvml");
  auto s = (*reader)->read();
  REQUIRE(s.ok());
  CHECK(s->core_mhz == 1980);

  auto elsewhere = open_pci_clock_reader(kPciVendorNvidia, {0, 0x18, 0, 0}, "sm_90", KFORGE_FAKE_NVML);
  REQUIRE_FALSE(elsewhere.ok());
  CHECK(elsewhere.error().code == ErrorCode::kNotFound);
  CHECK_THAT(elsewhere.error().message, Catch::Contains("00000000:18:00.0"));
}

TEST_CASE("a GPU of another vendor has no clock reader, and the error says why", "[clocks][unit]") {
  auto r = open_pci_clock_reader(0x8086, {0, 0x3, 0, 0}, "", KFORGE_FAKE_NVML);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == ErrorCode::kNotFound);
  CHECK_THAT(r.error().message, Catch::Contains("0x8086") && Catch::Contains("00000000:03:00.0"));
}
