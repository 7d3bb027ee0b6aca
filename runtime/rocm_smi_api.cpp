// Binds ROCm SMI with dlopen/dlsym, finds a GPU by its PCI address and reads
// its clocks, temperature, power and throttle status.
#include "rocm_smi_api.hpp"

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace kforge::rocm_smi {

namespace {

/// One GPU family's throttler status bits: names[i] is bit i, nullptr where
/// the firmware leaves the bit spare. Taken from the SMU driver interface
/// headers of the Linux amdgpu driver (THROTTLER_*_BIT), whose values the
/// gpu_metrics throttle_status carries unchanged.
struct ThrottleLayout {
  const char* arch;
  std::vector<const char*> names;
};

const std::vector<ThrottleLayout>& throttle_layouts() {
  // clang-format off
  static const std::vector<ThrottleLayout> layouts = {
      // Vega 20 (MI50, MI60, Radeon VII): smu11_driver_if.h, THROTTLER_STATUS_*.
      {"gfx906",
       {nullptr, "temp_edge", "temp_hotspot", "temp_hbm", "temp_vr_gfx", "temp_vr_soc", "temp_vr_mem0",
        "temp_vr_mem1", "temp_liquid", "temp_plx", "temp_skin", "tdc_gfx", "tdc_soc", "ppt", "fit", "ppm"}},
      // Arcturus (MI100): smu11_driver_if_arcturus.h.
      {"gfx908",
       {nullptr, "temp_edge", "temp_hotspot", "temp_mem", "temp_vr_gfx", "temp_vr_mem", "temp_vr_soc", "tdc_gfx",
        "tdc_soc", "ppt0", "ppt1", "ppt2", "ppt3", "ppm", "fit", "apcc", "vrhot0", "vrhot1"}},
      // Aldebaran (MI210, MI250, MI250X): smu13_driver_if_aldebaran.h.
      {"gfx90a",
       {"ppt0", "ppt1", "tdc_gfx", "tdc_soc", "tdc_hbm", nullptr, "temp_gpu", "temp_mem", nullptr, nullptr, nullptr,
        "temp_vr_gfx", "temp_vr_soc", "temp_vr_mem", nullptr, nullptr, nullptr, nullptr, nullptr, "apcc"}},
  };
  // clang-format on
  return layouts;
}

Result<const RocmSmiApi*> load_library(const std::vector<std::string>& candidates) {
  auto api = std::make_unique<RocmSmiApi>();
  KF_TRY_ASSIGN(lib, DynamicLibrary::open("ROCm SMI", candidates));
  api->lib = std::move(lib);
  KF_TRY(api->lib.bind(api->rsmi_init, "rsmi_init"));
  KF_TRY(api->lib.bind(api->rsmi_status_string, "rsmi_status_string"));
  KF_TRY(api->lib.bind(api->rsmi_num_monitor_devices, "rsmi_num_monitor_devices"));
  KF_TRY(api->lib.bind(api->rsmi_dev_pci_id_get, "rsmi_dev_pci_id_get"));
  KF_TRY(api->lib.bind(api->rsmi_dev_gpu_clk_freq_get, "rsmi_dev_gpu_clk_freq_get"));
  (void)api->lib.bind(api->rsmi_dev_temp_metric_get, "rsmi_dev_temp_metric_get");
  (void)api->lib.bind(api->rsmi_dev_power_ave_get, "rsmi_dev_power_ave_get");
  (void)api->lib.bind(api->rsmi_dev_gpu_metrics_info_get, "rsmi_dev_gpu_metrics_info_get");
  if (const rsmi_status_t r = api->rsmi_init(0); r != RSMI_STATUS_SUCCESS) {
    return Error::not_found("rsmi_init failed: " + api->error_text(r));
  }
  return api.release();  // kept for the process, like the library itself
}

/// The current level's frequency in MHz, or -1 where the table or its index
/// cannot be read (the index is -1 when the driver marks no level current).
double current_mhz(const RocmSmiApi& api, std::uint32_t index, rsmi_clk_type_t type, std::string* error) {
  rsmi_frequencies_t f{};
  if (const rsmi_status_t r = api.rsmi_dev_gpu_clk_freq_get(index, type, &f); r != RSMI_STATUS_SUCCESS) {
    if (error->empty()) error->assign("rsmi_dev_gpu_clk_freq_get: " + api.error_text(r));
    return -1;
  }
  if (f.current >= f.num_supported || f.current >= RSMI_MAX_NUM_FREQUENCIES) return -1;
  return static_cast<double>(f.frequency[f.current]) * 1e-6;  // Hz
}

class RocmSmiClockReader final : public ClockReader {
 public:
  RocmSmiClockReader(const RocmSmiApi& api, std::uint32_t index, std::string gfx_arch,
                     std::uint32_t temp_sensor)
      : api_(api), index_(index), gfx_arch_(std::move(gfx_arch)), temp_sensor_(temp_sensor) {}

  const std::string& source() const override { return source_; }

  /// Each quantity on its own: one that fails stays -1 (or reasons_known
  /// false); only a sample where nothing at all could be read fails.
  Result<ClockSample> read() override {
    ClockSample s;
    std::string error;
    s.core_mhz = current_mhz(api_, index_, RSMI_CLK_TYPE_SYS, &error);
    s.memory_mhz = current_mhz(api_, index_, RSMI_CLK_TYPE_MEM, &error);
    std::int64_t millidegrees = 0;
    if (api_.rsmi_dev_temp_metric_get &&
        api_.rsmi_dev_temp_metric_get(index_, temp_sensor_, RSMI_TEMP_CURRENT, &millidegrees) ==
            RSMI_STATUS_SUCCESS) {
      s.temperature_c = static_cast<double>(millidegrees) * 1e-3;
    }
    std::uint64_t microwatts = 0;
    if (api_.rsmi_dev_power_ave_get &&
        api_.rsmi_dev_power_ave_get(index_, 0, &microwatts) == RSMI_STATUS_SUCCESS) {
      s.power_w = static_cast<double>(microwatts) * 1e-6;
    }
    rsmi_gpu_metrics_t metrics{};
    if (api_.rsmi_dev_gpu_metrics_info_get &&
        api_.rsmi_dev_gpu_metrics_info_get(index_, &metrics) == RSMI_STATUS_SUCCESS &&
        metrics.common_header.format_revision == RSMI_GPU_METRICS_API_FORMAT_VER) {
      s.reasons_mask = metrics.throttle_status;
      if (auto decoded = decode_throttle_status(gfx_arch_, metrics.throttle_status)) {
        s.reasons_known = true;
        s.reasons = std::move(decoded->names);
        s.throttled = decoded->throttled;
      }
    }
    if (s.core_mhz < 0 && s.memory_mhz < 0 && s.temperature_c < 0 && s.power_w < 0 && !s.reasons_known) {
      return Error{
          ErrorCode::kLaunch,
          "ROCm SMI read nothing for device " + std::to_string(index_) + (error.empty() ? "" : ": " + error),
          {}};
    }
    return s;
  }

 private:
  const RocmSmiApi& api_;
  std::uint32_t index_;
  std::string gfx_arch_;
  std::uint32_t temp_sensor_;
  std::string source_ = "rocm_smi";
};

}  // namespace

std::string PciAddress::text() const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x", domain, bus, device);
  return buf;
}

PciAddress PciAddress::from_bdfid(std::uint64_t bdfid) {
  return {static_cast<std::uint32_t>(bdfid >> 32), static_cast<std::uint32_t>((bdfid >> 8) & 0xff),
          static_cast<std::uint32_t>((bdfid >> 3) & 0x1f)};
}

std::optional<ThrottleReasons> decode_throttle_status(const std::string& gfx_arch, std::uint32_t status) {
  for (const auto& layout : throttle_layouts()) {
    if (gfx_arch != layout.arch) continue;
    ThrottleReasons out;
    for (std::size_t bit = 0; bit < 32; ++bit) {
      if (!(status & (std::uint32_t{1} << bit))) continue;
      const char* name = bit < layout.names.size() ? layout.names[bit] : nullptr;
      out.names.push_back(name ? name : "bit_" + std::to_string(bit));
      if (name) out.throttled = true;
    }
    return out;
  }
  return std::nullopt;
}

Result<const RocmSmiApi*> RocmSmiApi::load(const std::string& library) {
  return load_once(library_files(library, "KFORGE_ROCM_SMI_LIBRARY", {"librocm_smi64.so.1", "librocm_smi64.so"}),
                   &load_library);
}

std::string RocmSmiApi::error_text(rsmi_status_t r) const {
  const char* text = nullptr;
  if (!rsmi_status_string || rsmi_status_string(r, &text) != RSMI_STATUS_SUCCESS || !text)
    text = "ROCm SMI error";
  std::string s(text);
  if (const auto nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  return s + " (" + std::to_string(static_cast<unsigned>(r)) + ")";
}

Result<std::unique_ptr<ClockReader>> open_rocm_smi_clock_reader(const PciAddress& pci,
                                                                const std::string& gfx_arch,
                                                                const std::string& library) {
  KF_TRY_ASSIGN(api, RocmSmiApi::load(library));
  std::uint32_t count = 0;
  if (const rsmi_status_t r = api->rsmi_num_monitor_devices(&count); r != RSMI_STATUS_SUCCESS) {
    return Error::not_found("rsmi_num_monitor_devices failed: " + api->error_text(r));
  }
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint64_t bdfid = 0;
    if (api->rsmi_dev_pci_id_get(i, &bdfid) != RSMI_STATUS_SUCCESS || PciAddress::from_bdfid(bdfid) != pci)
      continue;
    // Junction (hotspot) temperature, what the firmware throttles on; GPUs
    // before Vega 20 report only the edge sensor.
    std::uint32_t sensor = RSMI_TEMP_TYPE_JUNCTION;
    std::int64_t probe = 0;
    if (api->rsmi_dev_temp_metric_get &&
        api->rsmi_dev_temp_metric_get(i, sensor, RSMI_TEMP_CURRENT, &probe) != RSMI_STATUS_SUCCESS) {
      sensor = RSMI_TEMP_TYPE_EDGE;
    }
    return std::unique_ptr<ClockReader>(std::make_unique<RocmSmiClockReader>(*api, i, gfx_arch, sensor));
  }
  return Error::not_found("ROCm SMI has no GPU at PCI " + pci.text() + " (" + std::to_string(count) +
                          " device(s) monitored)");
}

}  // namespace kforge::rocm_smi
