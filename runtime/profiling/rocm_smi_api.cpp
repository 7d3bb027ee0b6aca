// Binds ROCm SMI with dlopen/dlsym, finds a GPU by its PCI address and reads
// its clocks, temperature, power and throttle status.
#include "runtime/profiling/rocm_smi_api.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace kforge::rocm_smi {

namespace {

/// One GPU family's throttler status bits: names[i] is bit i, nullptr where
/// the firmware leaves the bit spare. Taken from the SMU driver interface
/// headers of the Linux amdgpu driver (THROTTLER_*_BIT), whose values the
/// gpu_metrics throttle_status carries unchanged.
struct ThrottleLayout {
  std::vector<std::string> archs;
  std::vector<const char*> names;
};

const std::vector<ThrottleLayout>& throttle_layouts() {
  // clang-format off
  static const std::vector<ThrottleLayout> layouts = {
      // Vega 20 (MI50, MI60, Radeon VII): smu11_driver_if.h, THROTTLER_STATUS_*.
      {{"gfx906"},
       {nullptr, "temp_edge", "temp_hotspot", "temp_hbm", "temp_vr_gfx", "temp_vr_soc", "temp_vr_mem0",
        "temp_vr_mem1", "temp_liquid", "temp_plx", "temp_skin", "tdc_gfx", "tdc_soc", "ppt", "fit", "ppm"}},
      // Arcturus (MI100): smu11_driver_if_arcturus.h.
      {{"gfx908"},
       {nullptr, "temp_edge", "temp_hotspot", "temp_mem", "temp_vr_gfx", "temp_vr_mem", "temp_vr_soc", "tdc_gfx",
        "tdc_soc", "ppt0", "ppt1", "ppt2", "ppt3", "ppm", "fit", "apcc", "vrhot0", "vrhot1"}},
      // Aldebaran (MI210, MI250, MI250X): smu13_driver_if_aldebaran.h.
      {{"gfx90a"},
       {"ppt0", "ppt1", "tdc_gfx", "tdc_soc", "tdc_hbm", nullptr, "temp_gpu", "temp_mem", nullptr, nullptr, nullptr,
        "temp_vr_gfx", "temp_vr_soc", "temp_vr_mem", nullptr, nullptr, nullptr, nullptr, nullptr, "apcc"}},
      // Navi 10, 12, 14 (RDNA 1): smu11_driver_if_navi10.h.
      {{"gfx1010", "gfx1011", "gfx1012"},
       {nullptr, "temp_edge", "temp_hotspot", "temp_mem", "temp_vr_gfx", "temp_vr_mem0", "temp_vr_mem1",
        "temp_vr_soc", "temp_liquid0", "temp_liquid1", "temp_plx", "temp_skin", "tdc_gfx", "tdc_soc", "ppt0",
        "ppt1", "ppt2", "ppt3", "fit", "ppm", "apcc"}},
      // Navi 21, 22, 23, 24 (RDNA 2, W6800 and the RX 6000s): smu11_driver_if_sienna_cichlid.h.
      {{"gfx1030", "gfx1031", "gfx1032", "gfx1034"},
       {nullptr, "temp_edge", "temp_hotspot", "temp_mem", "temp_vr_gfx", "temp_vr_mem0", "temp_vr_mem1",
        "temp_vr_soc", "temp_liquid0", "temp_liquid1", "temp_plx", "tdc_gfx", "tdc_soc", "ppt0", "ppt1", "ppt2",
        "ppt3", "fit", "ppm", "apcc"}},
      // Navi 31, 32, 33 (RDNA 3, W7900 and the RX 7000s): smu13_driver_if_v13_0_0.h and
      // smu13_driver_if_v13_0_7.h, which define the same bits.
      {{"gfx1100", "gfx1101", "gfx1102"},
       {"temp_edge", "temp_hotspot", "temp_hotspot_gfx", "temp_hotspot_mem", "temp_mem", "temp_vr_gfx",
        "temp_vr_mem0", "temp_vr_mem1", "temp_vr_soc", "temp_vr_u", "temp_liquid0", "temp_liquid1", "temp_plx",
        "tdc_gfx", "tdc_soc", "tdc_u", "ppt0", "ppt1", "ppt2", "ppt3", "fit", "gfx_apcc_plus"}},
  };
  // clang-format on
  return layouts;
}

/// The ASIC-independent throttler bits (SMU_THROTTLER_*_BIT in the amdgpu
/// driver's amdgpu_smu.h): bit -> name, every one a limiter.
const std::vector<std::pair<int, const char*>>& independent_throttle_bits() {
  static const std::vector<std::pair<int, const char*>> bits = {
      {0, "ppt0"},           {1, "ppt1"},           {2, "ppt2"},           {3, "ppt3"},
      {4, "spl"},            {5, "fppt"},           {6, "sppt"},           {7, "sppt_apu"},
      {16, "tdc_gfx"},       {17, "tdc_soc"},       {18, "tdc_mem"},       {19, "tdc_vdd"},
      {20, "tdc_cvip"},      {21, "edc_cpu"},       {22, "edc_gfx"},       {23, "apcc"},
      {32, "temp_gpu"},      {33, "temp_core"},     {34, "temp_mem"},      {35, "temp_edge"},
      {36, "temp_hotspot"},  {37, "temp_soc"},      {38, "temp_vr_gfx"},   {39, "temp_vr_soc"},
      {40, "temp_vr_mem0"},  {41, "temp_vr_mem1"},  {42, "temp_liquid0"},  {43, "temp_liquid1"},
      {44, "vrhot0"},        {45, "vrhot1"},        {46, "prochot_cpu"},   {47, "prochot_gfx"},
      {56, "ppm"},           {57, "fit"},
  };
  return bits;
}

/// rsmi_version_get's major version: 5 for upstream ROCm SMI 5.x, 1 as
/// Debian builds 5.2.3, 6 and later from ROCm 6.0 on; 0 where the call is
/// missing or fails.
std::uint32_t library_major(const RocmSmiApi& api) {
  rsmi_version_t v{};
  if (!api.rsmi_version_get || api.rsmi_version_get(&v) != RSMI_STATUS_SUCCESS) return 0;
  return v.major;
}

/// rsmi_frequencies_t as ROCm SMI 6.0 and later lay it out: a deep-sleep
/// flag first and 33 levels, 280 bytes against the 264 of this build's
/// (5.x) header.
struct FrequenciesV6 {
  bool has_deep_sleep;
  std::uint32_t num_supported;
  std::uint32_t current;
  std::uint64_t frequency[33];
};

/// Where a library call writes a table: `buffer`, larger than any version's
/// table, with the first `read_back` bytes (as much as is read back) zeroed,
/// so fields a library leaves unwritten read as 0. The rest is not touched:
/// this runs after every timed launch.
void* cleared(std::vector<std::uint64_t>* buffer, std::size_t read_back) {
  std::memset(buffer->data(), 0, read_back);
  return buffer->data();
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
  (void)api->lib.bind(api->rsmi_dev_current_socket_power_get, "rsmi_dev_current_socket_power_get");
  (void)api->lib.bind(api->rsmi_dev_gpu_metrics_info_get, "rsmi_dev_gpu_metrics_info_get");
  (void)api->lib.bind(api->rsmi_dev_metrics_throttle_status_get, "rsmi_dev_metrics_throttle_status_get");
  (void)api->lib.bind(api->rsmi_dev_metrics_indep_throttle_status_get,
                      "rsmi_dev_metrics_indep_throttle_status_get");
  (void)api->lib.bind(api->rsmi_version_get, "rsmi_version_get");
  if (const rsmi_status_t r = api->rsmi_init(0); r != RSMI_STATUS_SUCCESS) {
    return Error::not_found("rsmi_init failed: " + api->error_text(r));
  }
  return api.release();  // kept for the process, like the library itself
}

/// The current level's frequency in MHz, or -1 where the table or its index
/// cannot be read (the index is -1 when the driver marks no level current).
/// The table is laid out as the library's major version says; it is read
/// into `buffer`, larger than either layout, so no version overruns it.
double current_mhz(const RocmSmiApi& api, std::uint32_t index, rsmi_clk_type_t type, std::uint32_t major,
                   std::vector<std::uint64_t>* buffer, std::string* error) {
  auto* table = static_cast<rsmi_frequencies_t*>(cleared(buffer, sizeof(FrequenciesV6)));
  if (const rsmi_status_t r = api.rsmi_dev_gpu_clk_freq_get(index, type, table); r != RSMI_STATUS_SUCCESS) {
    if (error->empty()) error->assign("rsmi_dev_gpu_clk_freq_get: " + api.error_text(r));
    return -1;
  }
  auto level = [&](auto f, std::size_t levels) {
    std::memcpy(&f, buffer->data(), sizeof f);
    if (f.current >= f.num_supported || f.current >= levels) return -1.0;
    return static_cast<double>(f.frequency[f.current]) * 1e-6;  // Hz
  };
  if (major >= 6) return level(FrequenciesV6{}, 33);
  return level(rsmi_frequencies_t{}, RSMI_MAX_NUM_FREQUENCIES);
}

class RocmSmiClockReader final : public ClockReader {
 public:
  RocmSmiClockReader(const RocmSmiApi& api, std::uint32_t index, std::string gfx_arch,
                     std::uint32_t temp_sensor)
      : api_(api),
        index_(index),
        gfx_arch_(std::move(gfx_arch)),
        temp_sensor_(temp_sensor),
        major_(library_major(api)) {}

  const std::string& source() const override { return source_; }

  /// Each quantity on its own: one that fails stays -1 (or reasons_known
  /// false); only a sample where nothing at all could be read fails.
  Result<ClockSample> read() override {
    ClockSample s;
    std::string error;
    s.core_mhz = current_mhz(api_, index_, RSMI_CLK_TYPE_SYS, major_, &buffer_, &error);
    s.memory_mhz = current_mhz(api_, index_, RSMI_CLK_TYPE_MEM, major_, &buffer_, &error);
    std::int64_t millidegrees = 0;
    if (api_.rsmi_dev_temp_metric_get &&
        api_.rsmi_dev_temp_metric_get(index_, temp_sensor_, RSMI_TEMP_CURRENT, &millidegrees) ==
            RSMI_STATUS_SUCCESS) {
      s.temperature_c = static_cast<double>(millidegrees) * 1e-3;
    }
    std::uint64_t microwatts = 0;
    // The average where the GPU keeps one; MI300 keeps only the present
    // socket power (ROCm SMI 6's rsmi_dev_current_socket_power_get).
    if ((api_.rsmi_dev_power_ave_get &&
         api_.rsmi_dev_power_ave_get(index_, 0, &microwatts) == RSMI_STATUS_SUCCESS) ||
        (api_.rsmi_dev_current_socket_power_get &&
         api_.rsmi_dev_current_socket_power_get(index_, &microwatts) == RSMI_STATUS_SUCCESS)) {
      s.power_w = static_cast<double>(microwatts) * 1e-6;
    }
    read_throttle_status(&s);
    if (s.core_mhz < 0 && s.memory_mhz < 0 && s.temperature_c < 0 && s.power_w < 0 && !s.reasons_known) {
      return Error{
          ErrorCode::kLaunch,
          "ROCm SMI read nothing for device " + std::to_string(index_) + (error.empty() ? "" : ": " + error),
          {}};
    }
    return s;
  }

 private:
  /// The throttle status, from the first source that answers:
  /// rsmi_dev_metrics_indep_throttle_status_get (later ROCm SMI 6 releases; the
  /// driver's ASIC-independent bits, any family), then
  /// rsmi_dev_metrics_throttle_status_get (the family's own bits), then the
  /// whole metrics table where its layout is this build's (format 1, content
  /// revision 1-3). All ones is how ROCm SMI fills a field the GPU's table
  /// lacks, so it counts as no answer. Where none answers, reasons stay unknown.
  void read_throttle_status(ClockSample* s) {
    std::uint64_t independent = 0;
    if (api_.rsmi_dev_metrics_indep_throttle_status_get &&
        api_.rsmi_dev_metrics_indep_throttle_status_get(index_, &independent) == RSMI_STATUS_SUCCESS &&
        independent != ~std::uint64_t{0}) {
      set_reasons(s, independent, decode_independent_throttle_status(independent));
      return;
    }
    std::uint32_t status = 0;
    bool read = api_.rsmi_dev_metrics_throttle_status_get &&
                api_.rsmi_dev_metrics_throttle_status_get(index_, &status) == RSMI_STATUS_SUCCESS &&
                status != ~std::uint32_t{0};
    // rsmi_gpu_metrics_t grew with every release after 5.x (ROCm 6.0 added the
    // gpu_metrics 1.4 fields, later ones partition statistics), so this
    // header's offsets hold only for libraries of that era (major 1-5).
    if (!read && api_.rsmi_dev_gpu_metrics_info_get && major_ >= 1 && major_ <= 5) {
      // The buffer leaves room for a library newer than its version says
      // (a 5.x table is 96 bytes; a recent one, by its field list, under 2 KiB).
      rsmi_gpu_metrics_t table{};
      if (api_.rsmi_dev_gpu_metrics_info_get(
              index_, static_cast<rsmi_gpu_metrics_t*>(cleared(&buffer_, sizeof table))) == RSMI_STATUS_SUCCESS) {
        std::memcpy(&table, buffer_.data(), sizeof table);
        if (table.common_header.format_revision == RSMI_GPU_METRICS_API_FORMAT_VER &&
            table.common_header.content_revision >= RSMI_GPU_METRICS_API_CONTENT_VER_1 &&
            table.common_header.content_revision <= RSMI_GPU_METRICS_API_CONTENT_VER_3 &&
            table.throttle_status != ~std::uint32_t{0}) {
          status = table.throttle_status;
          read = true;
        }
      }
    }
    if (read) set_reasons(s, status, decode_throttle_status(gfx_arch_, status));
  }

  /// The raw bits always; names and the verdict where the layout is known.
  static void set_reasons(ClockSample* s, std::uint64_t mask, std::optional<ThrottleReasons> decoded) {
    s->reasons_mask = mask;
    if (!decoded) return;
    s->reasons_known = true;
    s->reasons = std::move(decoded->names);
    s->throttled = decoded->throttled;
  }

  const RocmSmiApi& api_;
  std::uint32_t index_;
  std::string gfx_arch_;
  std::uint32_t temp_sensor_;
  std::uint32_t major_;  ///< the library's major version (library_major)
  /// Where ROCm SMI writes its tables, larger than any version's.
  std::vector<std::uint64_t> buffer_ = std::vector<std::uint64_t>(4096);  // 32 KiB
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
    if (std::find(layout.archs.begin(), layout.archs.end(), gfx_arch) == layout.archs.end()) continue;
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

ThrottleReasons decode_independent_throttle_status(std::uint64_t status) {
  ThrottleReasons out;
  const auto& known = independent_throttle_bits();
  for (int bit = 0; bit < 64; ++bit) {
    if (!(status & (std::uint64_t{1} << bit))) continue;
    const auto it = std::find_if(known.begin(), known.end(), [bit](const auto& b) { return b.first == bit; });
    out.names.push_back(it != known.end() ? it->second : "bit_" + std::to_string(bit));
    if (it != known.end()) out.throttled = true;
  }
  return out;
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
