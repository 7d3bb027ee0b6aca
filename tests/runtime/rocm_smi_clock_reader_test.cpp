// The ROCm SMI clock reader through a fake librocm_smi64 (fake_rocm_smi.cpp)
// loaded with dlopen: PCI matching, clocks from the frequency table and its
// current level, throttle status decoding per GPU family, and the errors
// when the library, a symbol or the GPU is missing; then the real library,
// if installed, on this machine.
#include <catch2/catch.hpp>
#include <cstdlib>

#include "runtime/profiling/pci_clock_reader.hpp"
#include "runtime/profiling/rocm_smi_api.hpp"
#include "tests/test_util.hpp"

using namespace kforge;
using rocm_smi::PciAddress;

namespace {

/// Points the fake at a script for the life of the object.
struct FakeRocmSmiScript : test::ScopedScriptFile {
  explicit FakeRocmSmiScript(const std::string& text)
      : ScopedScriptFile("KFORGE_FAKE_ROCM_SMI_SCRIPT", text) {}
};

// Two GPUs: 0000:03:00.0 and 0001:c3:00.0 (BDF ids as rsmi_dev_pci_id_get
// gives them). Clock levels in Hz.
const std::string kTwoGpus =
    "device 300\n"
    "sys 500000000 800000000 1700000000\n"
    "mem 1600000000\n"
    "sample 0 0 30000 31000 40000000 0\n"
    "device 10000c300\n"
    "sys 500000000 1000000000 1500000000 1700000000\n"
    "mem 400000000 1600000000\n";

const PciAddress kSecondGpu{1, 0xc3, 0};

}  // namespace

TEST_CASE("a BDF id gives the PCI address HIP reports", "[clocks][unit]") {
  CHECK(PciAddress::from_bdfid(0x300) == PciAddress{0, 3, 0});
  CHECK(PciAddress::from_bdfid(0x10000c300) == kSecondGpu);
  // Function bits are dropped; device is bits 7..3.
  CHECK(PciAddress::from_bdfid(0x0000002bf9) == PciAddress{0, 0x2b, 0x1f});
  CHECK(PciAddress{0, 0xc3, 0}.text() == "0000:c3:00");
  CHECK(PciAddress{0xabcd, 0x2b, 0x1f}.text() == "abcd:2b:1f");
}

TEST_CASE("throttle status bits decode per GPU family", "[clocks][unit]") {
  SECTION("MI200 (gfx90a)") {
    auto r = rocm_smi::decode_throttle_status("gfx90a", 0x1 | 0x40 | 0x80000);
    REQUIRE(r);
    CHECK(r->names == std::vector<std::string>{"ppt0", "temp_gpu", "apcc"});
    CHECK(r->throttled);
    r = rocm_smi::decode_throttle_status("gfx90a", 0x4 | 0x2000);
    CHECK(r->names == std::vector<std::string>{"tdc_gfx", "temp_vr_mem"});
  }
  SECTION("MI100 (gfx908)") {
    auto r = rocm_smi::decode_throttle_status("gfx908", 0x4 | 0x200 | 0x20000);
    REQUIRE(r);
    CHECK(r->names == std::vector<std::string>{"temp_hotspot", "ppt0", "vrhot1"});
    CHECK(r->throttled);
  }
  SECTION("Vega 20 (gfx906)") {
    auto r = rocm_smi::decode_throttle_status("gfx906", 0x2000 | 0x8);
    REQUIRE(r);
    CHECK(r->names == std::vector<std::string>{"temp_hbm", "ppt"});
    CHECK(r->throttled);
  }
  SECTION("no bits: not throttled") {
    auto r = rocm_smi::decode_throttle_status("gfx90a", 0);
    REQUIRE(r);
    CHECK(r->names.empty());
    CHECK_FALSE(r->throttled);
  }
  SECTION("spare bits are named by number and are not throttling") {
    auto r = rocm_smi::decode_throttle_status("gfx90a", 0x20 | 0x100 | 0x80000000u);
    REQUIRE(r);
    CHECK(r->names == std::vector<std::string>{"bit_5", "bit_8", "bit_31"});
    CHECK_FALSE(r->throttled);
    CHECK_FALSE(rocm_smi::decode_throttle_status("gfx908", 0x1)->throttled);  // Arcturus' padding bit
  }
  SECTION("RDNA 1 (gfx1010-1012): skin temperature at bit 11 moves the limits after it") {
    auto r = rocm_smi::decode_throttle_status("gfx1012", 0x800 | 0x4000 | 0x100000);
    REQUIRE(r);
    CHECK(r->names == std::vector<std::string>{"temp_skin", "ppt0", "apcc"});
    CHECK(r->throttled);
  }
  SECTION("RDNA 2 (gfx1030-1032, gfx1034)") {
    auto r = rocm_smi::decode_throttle_status("gfx1030", 0x4 | 0x2000 | 0x80000);
    REQUIRE(r);
    CHECK(r->names == std::vector<std::string>{"temp_hotspot", "ppt0", "apcc"});
    CHECK(rocm_smi::decode_throttle_status("gfx1034", 0x800)->names == std::vector<std::string>{"tdc_gfx"});
    CHECK_FALSE(rocm_smi::decode_throttle_status("gfx1031", 0x1)->throttled);  // the padding bit
  }
  SECTION("RDNA 3 (gfx1100-1102): no padding bit, hotspot split into gfx and memory") {
    auto r = rocm_smi::decode_throttle_status("gfx1100", 0x1 | 0x8 | 0x10000 | 0x200000);
    REQUIRE(r);
    CHECK(r->names == std::vector<std::string>{"temp_edge", "temp_hotspot_mem", "ppt0", "gfx_apcc_plus"});
    CHECK(r->throttled);
    CHECK(rocm_smi::decode_throttle_status("gfx1102", 0x100000)->names == std::vector<std::string>{"fit"});
  }
  SECTION("families without a known layout") {
    CHECK_FALSE(rocm_smi::decode_throttle_status("gfx942", 0x4));   // MI300: no layout carried
    CHECK_FALSE(rocm_smi::decode_throttle_status("gfx1033", 0x4));  // Van Gogh, an APU
    CHECK_FALSE(rocm_smi::decode_throttle_status("", 0));
  }
}

TEST_CASE("the driver's ASIC-independent throttle bits decode alike for every family", "[clocks][unit]") {
  auto r = rocm_smi::decode_independent_throttle_status(0x1 | (std::uint64_t{1} << 36) | (std::uint64_t{1} << 57));
  CHECK(r.names == std::vector<std::string>{"ppt0", "temp_hotspot", "fit"});
  CHECK(r.throttled);
  r = rocm_smi::decode_independent_throttle_status((std::uint64_t{1} << 16) | (std::uint64_t{1} << 47));
  CHECK(r.names == std::vector<std::string>{"tdc_gfx", "prochot_gfx"});
  // Bits the driver does not define are named by number and are not throttling.
  r = rocm_smi::decode_independent_throttle_status(0x100 | (std::uint64_t{1} << 63));
  CHECK(r.names == std::vector<std::string>{"bit_8", "bit_63"});
  CHECK_FALSE(r.throttled);
  CHECK(rocm_smi::decode_independent_throttle_status(0).names.empty());
}

TEST_CASE("the ROCm SMI reader finds the GPU by PCI address and reads its levels", "[clocks][unit]") {
  FakeRocmSmiScript script(kTwoGpus +
                           "sample 3 1 52000 61000 250000000 0\n"    // idle-free, unthrottled
                           "sample 1 1 80000 104000 300000000 c0\n"  // temp_gpu + temp_mem
                           "sample 2 0 60000 70000 560000000 1\n"    // ppt0
                           "sample 2 1 60000 70000 400000000 20\n"   // spare bit only
                           "sample - 9 - 70000 - -\n"                // GFX clock unreadable, bad index...
                           "sample 3 1 60000 70000 400000000 4\n");  // tdc_gfx
  auto reader = rocm_smi::open_rocm_smi_clock_reader(kSecondGpu, "gfx90a", KFORGE_FAKE_ROCM_SMI);
  REQUIRE(reader.ok());
  CHECK((*reader)->source() == "rocm_smi");

  auto s = (*reader)->read();
  REQUIRE(s.ok());
  CHECK(s->core_mhz == Approx(1700.0));  // the second GPU's table, not the first's
  CHECK(s->memory_mhz == Approx(1600.0));
  CHECK(s->temperature_c == Approx(61.0));  // junction
  CHECK(s->power_w == Approx(250.0));
  CHECK(s->reasons_known);
  CHECK(s->reasons_mask == 0);
  CHECK(s->reasons.empty());
  CHECK_FALSE(s->throttled);

  s = (*reader)->read();
  CHECK(s->core_mhz == Approx(1000.0));
  CHECK(s->temperature_c == Approx(104.0));
  CHECK(s->reasons_mask == 0xc0);
  CHECK(s->reasons == std::vector<std::string>{"temp_gpu", "temp_mem"});
  CHECK(s->throttled);

  s = (*reader)->read();
  CHECK(s->core_mhz == Approx(1500.0));
  CHECK(s->memory_mhz == Approx(400.0));
  CHECK(s->power_w == Approx(560.0));
  CHECK(s->reasons == std::vector<std::string>{"ppt0"});
  CHECK(s->throttled);

  s = (*reader)->read();
  CHECK(s->reasons == std::vector<std::string>{"bit_5"});
  CHECK_FALSE(s->throttled);

  // One failed quantity leaves it at -1 and the rest of the sample stands.
  s = (*reader)->read();
  REQUIRE(s.ok());
  CHECK(s->core_mhz == -1);
  CHECK(s->memory_mhz == -1);  // level 9 of a 2-level table
  CHECK(s->temperature_c == Approx(70.0));
  CHECK(s->power_w == -1);
  CHECK_FALSE(s->reasons_known);
  CHECK_FALSE(s->throttled);

  s = (*reader)->read();
  CHECK(s->core_mhz == Approx(1700.0));
  CHECK(s->reasons == std::vector<std::string>{"tdc_gfx"});
  CHECK(s->throttled);
}

TEST_CASE("an AMD OpenCL GPU is read through ROCm SMI by its PCI address", "[clocks][unit]") {
  FakeRocmSmiScript script(kTwoGpus + "sample 3 1 52000 61000 250000000 0\n");
  // The address as the OpenCL topology query gives it (no domain there, so
  // the first GPU's), function included, which ROCm SMI's match drops.
  auto reader = open_pci_clock_reader(kPciVendorAmd, {0, 0x03, 0, 0}, "gfx90a", KFORGE_FAKE_ROCM_SMI);
  REQUIRE(reader.ok());
  CHECK((*reader)->source() == "rocm_smi");
  auto s = (*reader)->read();
  REQUIRE(s.ok());
  CHECK(s->core_mhz == Approx(500.0));  // the first GPU's table: level 0 of 500, 800, 1700 MHz
  auto elsewhere = open_pci_clock_reader(kPciVendorAmd, {0, 0xc4, 0, 0}, "gfx90a", KFORGE_FAKE_ROCM_SMI);
  REQUIRE_FALSE(elsewhere.ok());
  CHECK(elsewhere.error().code == ErrorCode::kNotFound);
}

TEST_CASE("the ROCm SMI reader falls back to the edge sensor and knows no reasons it cannot decode",
          "[clocks][unit]") {
  FakeRocmSmiScript script(kTwoGpus + "sample 1 1 47000 - 90000000 4\n");
  SECTION("a family without a throttle layout: the raw bits are kept, not named") {
    auto reader = rocm_smi::open_rocm_smi_clock_reader(kSecondGpu, "gfx942", KFORGE_FAKE_ROCM_SMI);
    REQUIRE(reader.ok());
    auto s = (*reader)->read();
    REQUIRE(s.ok());
    CHECK(s->temperature_c == Approx(47.0));  // edge: no junction sensor
    CHECK(s->power_w == Approx(90.0));
    CHECK_FALSE(s->reasons_known);
    CHECK(s->reasons_mask == 0x4);
    CHECK(s->reasons.empty());
    CHECK_FALSE(s->throttled);
  }
  SECTION("a library without rsmi_dev_gpu_metrics_info_get") {
    auto reader = rocm_smi::open_rocm_smi_clock_reader(kSecondGpu, "gfx90a", KFORGE_FAKE_ROCM_SMI_NO_METRICS);
    REQUIRE(reader.ok());
    auto s = (*reader)->read();
    REQUIRE(s.ok());
    CHECK(s->core_mhz == Approx(1000.0));
    CHECK_FALSE(s->reasons_known);
    CHECK_FALSE(s->throttled);
  }
}

TEST_CASE("ROCm SMI 6's frequency tables, a deep-sleep flag first, are read by their layout", "[clocks][unit]") {
  // 280 bytes against this header's 264: read by the old layout, every
  // field moves and the call writes past the struct.
  FakeRocmSmiScript script("version 6\n" + kTwoGpus +
                           "sample 3 1 52000 61000 250000000 0\n"
                           "sample 1 0 52000 61000 250000000 0\n");
  auto reader = rocm_smi::open_rocm_smi_clock_reader(kSecondGpu, "gfx90a", KFORGE_FAKE_ROCM_SMI);
  REQUIRE(reader.ok());
  auto s = (*reader)->read();
  REQUIRE(s.ok());
  CHECK(s->core_mhz == Approx(1700.0));
  CHECK(s->memory_mhz == Approx(1600.0));
  s = (*reader)->read();
  CHECK(s->core_mhz == Approx(1000.0));
  CHECK(s->memory_mhz == Approx(400.0));
}

TEST_CASE("the metrics table is read only where its layout is this build's", "[clocks][unit]") {
  const std::string sample = "sample 1 1 47000 50000 90000000 c0\n";  // gfx90a: temp_gpu + temp_mem
  auto read_with = [&](const std::string& library_lines) {
    FakeRocmSmiScript script(library_lines + kTwoGpus + sample);
    auto reader = rocm_smi::open_rocm_smi_clock_reader(kSecondGpu, "gfx90a", KFORGE_FAKE_ROCM_SMI);
    REQUIRE(reader.ok());
    auto s = (*reader)->read();
    REQUIRE(s.ok());
    CHECK(s->core_mhz == Approx(1000.0));  // the rest of the sample stands either way
    return *s;
  };
  SECTION("ROCm SMI 5 (Debian's 5.2.3 says 1.0.0): read") {
    for (const char* version : {"version 5\n", "version 1\n"}) {
      const ClockSample s = read_with(version);
      CHECK(s.reasons == std::vector<std::string>{"temp_gpu", "temp_mem"});
      CHECK(s.throttled);
    }
  }
  SECTION("a library that writes a larger table than this build's struct") {
    // 2 KiB, about what a recent ROCm SMI's table comes to; the reader's buffer takes it.
    const ClockSample s = read_with("version 5\ntable 2048 1\n");
    CHECK(s.reasons == std::vector<std::string>{"temp_gpu", "temp_mem"});
  }
  SECTION("ROCm SMI 6 and later, whose table has another layout: not read") {
    const ClockSample s = read_with("version 7\ntable 2048 1\n");
    CHECK_FALSE(s.reasons_known);
    CHECK(s.reasons_mask == 0);
    CHECK_FALSE(s.throttled);
  }
  SECTION("a library without rsmi_version_get's answer: not read") {
    CHECK_FALSE(read_with("version 0\n").reasons_known);
  }
  SECTION("a table of another content revision (gpu_metrics 1.4, MI300's): not read") {
    CHECK_FALSE(read_with("table 96 4\n").reasons_known);
    CHECK_FALSE(read_with("table 96 0\n").reasons_known);
    CHECK(read_with("table 96 3\n").reasons_known);
  }
}

TEST_CASE("ROCm SMI's one-field getters give the throttle status whatever the table's layout, and power",
          "[clocks][unit]") {
  SECTION("the ASIC-independent bits first, for any family") {
    FakeRocmSmiScript script("version 7\n" + kTwoGpus + "sample 1 1 47000 50000 90000000 c0 1000000001\n");
    auto reader = rocm_smi::open_rocm_smi_clock_reader(kSecondGpu, "gfx942", KFORGE_FAKE_ROCM_SMI_FIELD_GETTERS);
    REQUIRE(reader.ok());
    auto s = (*reader)->read();
    REQUIRE(s.ok());
    CHECK(s->reasons_known);
    CHECK(s->reasons_mask == 0x1000000001u);
    CHECK(s->reasons == std::vector<std::string>{"ppt0", "temp_hotspot"});
    CHECK(s->throttled);
    CHECK(s->power_w == Approx(90.0));  // no average there: the present socket power
  }
  SECTION("else the family's own bits") {
    // Not supported, or all ones: how ROCm SMI fills a field the table lacks.
    for (const char* indep : {"", " ffffffffffffffff"}) {
      FakeRocmSmiScript script("version 7\n" + kTwoGpus + "sample 1 1 47000 50000 90000000 c0" + indep + "\n");
      auto reader =
          rocm_smi::open_rocm_smi_clock_reader(kSecondGpu, "gfx90a", KFORGE_FAKE_ROCM_SMI_FIELD_GETTERS);
      REQUIRE(reader.ok());
      auto s = (*reader)->read();
      REQUIRE(s.ok());
      CHECK(s->reasons_mask == 0xc0);
      CHECK(s->reasons == std::vector<std::string>{"temp_gpu", "temp_mem"});
    }
  }
  SECTION("all ones in both: unknown") {
    FakeRocmSmiScript script("version 7\n" + kTwoGpus +
                             "sample 1 1 47000 50000 90000000 ffffffff ffffffffffffffff\n");
    auto reader = rocm_smi::open_rocm_smi_clock_reader(kSecondGpu, "gfx90a", KFORGE_FAKE_ROCM_SMI_FIELD_GETTERS);
    REQUIRE(reader.ok());
    auto s = (*reader)->read();
    REQUIRE(s.ok());
    CHECK_FALSE(s->reasons_known);
    CHECK_FALSE(s->throttled);
  }
}

TEST_CASE("a sample where ROCm SMI reads nothing fails, naming the first error", "[clocks][unit]") {
  FakeRocmSmiScript script(kTwoGpus + "sample - - - - - -\n");
  auto reader = rocm_smi::open_rocm_smi_clock_reader(kSecondGpu, "gfx90a", KFORGE_FAKE_ROCM_SMI);
  REQUIRE(reader.ok());
  auto s = (*reader)->read();
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message ==
        "ROCm SMI read nothing for device 1: rsmi_dev_gpu_clk_freq_get: "
        "RSMI_STATUS_NOT_SUPPORTED: This function is not supported in the current environment. (2)");
}

TEST_CASE("without ROCm SMI, its symbols or the GPU there is no reader, with the reason", "[clocks][unit]") {
  FakeRocmSmiScript script(kTwoGpus + "sample 1 1 47000 50000 90000000 0\n");
  auto missing =
      rocm_smi::open_rocm_smi_clock_reader(kSecondGpu, "gfx90a", "/nonexistent/librocm_smi64.so.1");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == ErrorCode::kNotFound);
  CHECK(missing.error().message.find("ROCm SMI (librocm_smi64.so.1) not found: ") == 0);

  // A library that loads but is not ROCm SMI.
  auto not_smi = rocm_smi::open_rocm_smi_clock_reader(kSecondGpu, "gfx90a", "libc.so.6");
  REQUIRE_FALSE(not_smi.ok());
  CHECK(not_smi.error().code == ErrorCode::kNotFound);
  CHECK(not_smi.error().message == "symbol rsmi_init not found in libc.so.6");

  auto other_gpu =
      rocm_smi::open_rocm_smi_clock_reader(PciAddress{0, 0xc3, 0}, "gfx90a", KFORGE_FAKE_ROCM_SMI);
  REQUIRE_FALSE(other_gpu.ok());
  CHECK(other_gpu.error().code == ErrorCode::kNotFound);
  CHECK(other_gpu.error().message == "ROCm SMI has no GPU at PCI 0000:c3:00 (2 device(s) monitored)");
}

TEST_CASE("KFORGE_ROCM_SMI_LIBRARY chooses the ROCm SMI library", "[clocks][unit]") {
  FakeRocmSmiScript script(kTwoGpus + "sample 0 1 47000 50000 90000000 0\n");
  auto reader = [] {
    const test::ScopedEnv library("KFORGE_ROCM_SMI_LIBRARY", KFORGE_FAKE_ROCM_SMI);
    return rocm_smi::open_rocm_smi_clock_reader(kSecondGpu, "gfx90a");
  }();
  REQUIRE(reader.ok());
  CHECK((*reader)->read().value().core_mhz == Approx(500.0));
}

TEST_CASE("the real ROCm SMI on this machine answers with a reason, not a crash", "[clocks][unit]") {
  // Installed by tools/deps.sh (librocm-smi64-1). Without an amdgpu driver
  // rsmi_init fails; with one there is no GPU at this address; without the
  // library it is not found. Each is kNotFound with its cause.
  auto reader = rocm_smi::open_rocm_smi_clock_reader(PciAddress{0xffff, 0xff, 0x1f}, "gfx90a");
  REQUIRE_FALSE(reader.ok());
  INFO(reader.error().message);
  CHECK(reader.error().code == ErrorCode::kNotFound);
  const std::string& m = reader.error().message;
  CHECK((m.rfind("rsmi_init failed: ", 0) == 0 || m.rfind("ROCm SMI has no GPU at PCI ffff:ff:1f", 0) == 0 ||
         m.rfind("ROCm SMI (librocm_smi64.so.1, librocm_smi64.so) not found: ", 0) == 0));
}
