// The few ROCm SMI calls kforge makes to read an AMD GPU's clocks, bound at
// run time with dlopen like NVML (nvml_api.hpp), so kforge builds against
// the packaged header (librocm-smi-dev) but runs where the library is absent.
#pragma once

#include <rocm_smi/rocm_smi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "runtime/platform/dynamic_library.hpp"
#include "runtime/profiling/clock_reader.hpp"

namespace kforge::rocm_smi {

/// A GPU's place on the PCI bus as HIP reports it (hipDeviceAttributePciDomainID,
/// ...PciBusId, ...PciDeviceId). HIP gives no function number, so none is kept.
struct PciAddress {
  std::uint32_t domain = 0;
  std::uint32_t bus = 0;
  std::uint32_t device = 0;
  /// "0000:c3:00", lower-case hex like lspci.
  std::string text() const;
  /// The address inside a BDF id from rsmi_dev_pci_id_get (domain in bits
  /// 63..32, bus 15..8, device 7..3, function 2..0, which is dropped).
  static PciAddress from_bdfid(std::uint64_t bdfid);
  bool operator==(const PciAddress&) const = default;
};

/// A throttle status decoded: a family's own bits or the ASIC-independent ones.
struct ThrottleReasons {
  std::vector<std::string> names;  ///< set bits in bit order: "ppt0", "temp_hotspot"; undefined bits "bit_5"
  /// A limiter that holds the clocks down is active. Every bit the SMU
  /// firmware defines is one (power, current, temperature, VR hot, PPM/FIT),
  /// so any named bit sets it; a bit the firmware leaves spare does not.
  bool throttled = false;
};

/// Decodes `status`, the throttle_status of the GPU metrics table. Its bits
/// are the SMU firmware's own and differ between GPU families, so the layout
/// is chosen by `gfx_arch`: gfx906 (Vega 20), gfx908 (MI100), gfx90a
/// (MI200), gfx1010-1012 (RDNA 1), gfx1030-1032 and gfx1034 (RDNA 2),
/// gfx1100-1102 (RDNA 3). Other families (MI300's gfx942 among them): nullopt.
std::optional<ThrottleReasons> decode_throttle_status(const std::string& gfx_arch, std::uint32_t status);

/// Decodes the driver's ASIC-independent indep_throttle_status (amdgpu's
/// SMU_THROTTLER_* bits, the same for every family; gpu_metrics 1.3 and
/// later), as later ROCm SMI 6 releases return it.
ThrottleReasons decode_independent_throttle_status(std::uint64_t status);

/// ROCm SMI as loaded from one library file, rsmi_init called.
struct RocmSmiApi {
  DynamicLibrary lib;
  rsmi_status_t (*rsmi_init)(std::uint64_t) = nullptr;
  rsmi_status_t (*rsmi_status_string)(rsmi_status_t, const char**) = nullptr;
  rsmi_status_t (*rsmi_num_monitor_devices)(std::uint32_t*) = nullptr;
  rsmi_status_t (*rsmi_dev_pci_id_get)(std::uint32_t, std::uint64_t*) = nullptr;
  rsmi_status_t (*rsmi_dev_gpu_clk_freq_get)(std::uint32_t, rsmi_clk_type_t, rsmi_frequencies_t*) = nullptr;
  rsmi_status_t (*rsmi_dev_temp_metric_get)(std::uint32_t, std::uint32_t, rsmi_temperature_metric_t,
                                            std::int64_t*) = nullptr;  ///< optional
  rsmi_status_t (*rsmi_dev_power_ave_get)(std::uint32_t, std::uint32_t,
                                          std::uint64_t*) = nullptr;                             ///< optional
  rsmi_status_t (*rsmi_dev_gpu_metrics_info_get)(std::uint32_t, rsmi_gpu_metrics_t*) = nullptr;  ///< optional
  /// One field of the metrics table each, whatever the table's layout
  /// (later ROCm SMI 6 releases; not in this build's header, so declared here).
  rsmi_status_t (*rsmi_dev_metrics_throttle_status_get)(std::uint32_t, std::uint32_t*) = nullptr;  ///< optional
  rsmi_status_t (*rsmi_dev_metrics_indep_throttle_status_get)(std::uint32_t,
                                                              std::uint64_t*) = nullptr;  ///< optional
  rsmi_status_t (*rsmi_dev_current_socket_power_get)(std::uint32_t, std::uint64_t*) = nullptr;  ///< optional
  rsmi_status_t (*rsmi_version_get)(rsmi_version_t*) = nullptr;                                ///< optional

  /// ROCm SMI from `library` (empty: $KFORGE_ROCM_SMI_LIBRARY, else
  /// librocm_smi64.so.1, else librocm_smi64.so, on the loader path), loaded
  /// and initialized once per file for the process. kNotFound names the
  /// library or the missing symbol; an rsmi_init failure (no amdgpu driver,
  /// no /sys/class/drm) is kNotFound with ROCm SMI's error string.
  static Result<const RocmSmiApi*> load(const std::string& library = {});
  /// "RSMI_STATUS_NOT_SUPPORTED: ... (2)".
  std::string error_text(rsmi_status_t r) const;
};

/// A ClockReader for the GPU at `pci` through ROCm SMI: current GFX (sys) and
/// memory clock from the DPM frequency table and its current level, junction
/// temperature (edge where the GPU has no junction sensor), average power
/// (the present socket power where the GPU keeps no average),
/// and the throttle status: the driver's ASIC-independent bits where the
/// library gives them, else the family's own decoded for `gfx_arch`
/// ("gfx90a"; where neither can be read or decoded the sample has
/// reasons_known false).
/// `library` as for RocmSmiApi::load. kNotFound when ROCm SMI or a GPU at
/// that address is missing: the caller then has no reader, which is not an
/// error for timing.
Result<std::unique_ptr<ClockReader>> open_rocm_smi_clock_reader(const PciAddress& pci,
                                                                const std::string& gfx_arch,
                                                                const std::string& library = {});

}  // namespace kforge::rocm_smi
