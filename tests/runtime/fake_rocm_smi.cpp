// A stand-in for librocm_smi64.so.1, built only for tests and loaded by path,
// so the ROCm SMI clock reader runs without an AMD GPU. It answers from a
// script file named by KFORGE_FAKE_ROCM_SMI_SCRIPT, read again whenever the
// devices are counted:
//
//   device BDFID_HEX                 a GPU, indexed in the order listed
//   sys HZ HZ ...                    the last device's GFX clock levels
//   mem HZ HZ ...                    ... and memory clock levels
//   sample SYS MEM EDGE JUNCTION POWER THROTTLE [INDEP]
//       one reading of the last device: current level indices, temperatures
//       in millidegrees, average power in microwatts, throttle status and
//       ASIC-independent throttle status (hex); "-" (or, for INDEP, nothing)
//       makes that call answer RSMI_STATUS_NOT_SUPPORTED. The last sample
//       repeats.
//   version MAJOR                    what rsmi_version_get says (default 5); from
//       6 on, frequency tables are written in ROCm SMI 6's layout
//   table BYTES CONTENT              the metrics table rsmi_dev_gpu_metrics_info_get
//       writes: BYTES in all (a newer library's larger table; past this
//       header's struct they are 0xa5) with content revision CONTENT
//       (default: the struct's size, revision 1)
//
// Each rsmi_dev_gpu_clk_freq_get(SYS) call moves to the next sample (the
// reader asks for the GFX clock first). Built with KFORGE_FAKE_ROCM_SMI_NO_METRICS
// it does not export rsmi_dev_gpu_metrics_info_get; with
// KFORGE_FAKE_ROCM_SMI_FIELD_GETTERS it plays a newer library on MI300:
// it also exports later ROCm SMI 6 releases' rsmi_dev_metrics_throttle_status_get,
// rsmi_dev_metrics_indep_throttle_status_get and
// rsmi_dev_current_socket_power_get (POWER), and has no power average. Status strings are the real
// library's (ROCm SMI 5.2.3).
#include <rocm_smi/rocm_smi.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/runtime/fake_script.hpp"

namespace {

struct Sample {
  std::optional<std::uint32_t> sys, mem;
  std::optional<std::int64_t> edge, junction;
  std::optional<std::uint64_t> power;
  std::optional<std::uint32_t> throttle;
  std::optional<std::uint64_t> indep_throttle;
};

/// rsmi_frequencies_t as ROCm SMI 6.0 and later lay it out (280 bytes; the
/// header here is 5.2.3's, 264).
struct FrequenciesV6 {
  bool has_deep_sleep;
  std::uint32_t num_supported;
  std::uint32_t current;
  std::uint64_t frequency[33];
};

struct Device {
  std::uint64_t bdfid = 0;
  std::vector<std::uint64_t> sys, mem;
  std::vector<Sample> samples;
  std::size_t next = 0;
  std::size_t current = 0;
};

std::vector<Device> devices;
bool initialized = false;
std::uint32_t version_major = 5;
std::size_t table_bytes = sizeof(rsmi_gpu_metrics_t);
std::uint8_t table_content = RSMI_GPU_METRICS_API_CONTENT_VER_1;

template <typename T>
std::optional<T> field(std::istringstream& words, bool hex = false) {
  std::string w;
  words >> w;
  if (w.empty() || w == "-") return std::nullopt;
  return static_cast<T>(std::stoull(w, nullptr, hex ? 16 : 10));
}

void load_script() {
  devices.clear();
  version_major = 5;
  table_bytes = sizeof(rsmi_gpu_metrics_t);
  table_content = RSMI_GPU_METRICS_API_CONTENT_VER_1;
  kforge::test::for_each_script_line("KFORGE_FAKE_ROCM_SMI_SCRIPT", [](const std::string& kind,
                                                                        std::istringstream& words) {
    if (kind == "version") {
      version_major = field<std::uint32_t>(words).value_or(0);
    } else if (kind == "table") {
      table_bytes = std::max(sizeof(rsmi_gpu_metrics_t), field<std::size_t>(words).value_or(0));
      table_content = field<std::uint8_t>(words).value_or(0);
    } else if (kind == "device") {
      devices.emplace_back();
      devices.back().bdfid = field<std::uint64_t>(words, true).value_or(0);
    } else if (devices.empty()) {
      return;
    } else if (kind == "sys" || kind == "mem") {
      auto& table = kind == "sys" ? devices.back().sys : devices.back().mem;
      std::uint64_t hz = 0;
      while (words >> hz) table.push_back(hz);
    } else if (kind == "sample") {
      Sample s;
      s.sys = field<std::uint32_t>(words);
      s.mem = field<std::uint32_t>(words);
      s.edge = field<std::int64_t>(words);
      s.junction = field<std::int64_t>(words);
      s.power = field<std::uint64_t>(words);
      s.throttle = field<std::uint32_t>(words, true);
      s.indep_throttle = field<std::uint64_t>(words, true);
      devices.back().samples.push_back(s);
    }
  });
}

/// The device's current sample, or nullptr for a bad index or no samples.
const Sample* current(std::uint32_t index) {
  if (!initialized || index >= devices.size() || devices[index].samples.empty()) return nullptr;
  return &devices[index].samples[devices[index].current];
}

/// A one-value call answered from the device's current sample: that value,
/// or RSMI_STATUS_NOT_SUPPORTED where the script gave "-" or nothing.
template <typename T, typename Out>
rsmi_status_t answer(std::uint32_t index, std::optional<T> Sample::*field, Out* out) {
  const Sample* s = current(index);
  if (!s) return RSMI_STATUS_INVALID_ARGS;
  if (!(s->*field)) return RSMI_STATUS_NOT_SUPPORTED;
  *out = *(s->*field);
  return RSMI_STATUS_SUCCESS;
}

#ifdef KFORGE_FAKE_ROCM_SMI_FIELD_GETTERS
constexpr bool kAverageKept = false;  // as on MI300
#else
constexpr bool kAverageKept = true;
#endif

}  // namespace

extern "C" {

__attribute__((visibility("default"))) rsmi_status_t rsmi_init(std::uint64_t) {
  initialized = true;
  return RSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) rsmi_status_t rsmi_version_get(rsmi_version_t* version) {
  *version = rsmi_version_t{version_major, 0, 0, "fake"};
  return RSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) rsmi_status_t rsmi_status_string(rsmi_status_t status,
                                                                        const char** text) {
  switch (status) {
    case RSMI_STATUS_SUCCESS:
      *text = "RSMI_STATUS_SUCCESS: The function has been executed successfully.";
      break;
    case RSMI_STATUS_INVALID_ARGS:
      *text =
          "RSMI_STATUS_INVALID_ARGS: The provided arguments do not meet the preconditions required for "
          "calling this function.";
      break;
    case RSMI_STATUS_NOT_SUPPORTED:
      *text = "RSMI_STATUS_NOT_SUPPORTED: This function is not supported in the current environment.";
      break;
    default:
      *text = "An unknown error occurred";
      break;
  }
  return RSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) rsmi_status_t rsmi_num_monitor_devices(std::uint32_t* count) {
  if (!initialized) return RSMI_STATUS_INIT_ERROR;
  load_script();
  *count = static_cast<std::uint32_t>(devices.size());
  return RSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) rsmi_status_t rsmi_dev_pci_id_get(std::uint32_t index,
                                                                         std::uint64_t* bdfid) {
  if (!initialized || index >= devices.size()) return RSMI_STATUS_INVALID_ARGS;
  *bdfid = devices[index].bdfid;
  return RSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) rsmi_status_t rsmi_dev_gpu_clk_freq_get(std::uint32_t index,
                                                                               rsmi_clk_type_t type,
                                                                               rsmi_frequencies_t* f) {
  if (!current(index)) return RSMI_STATUS_INVALID_ARGS;
  Device& d = devices[index];
  if (type == RSMI_CLK_TYPE_SYS) {  // the next reading
    d.current = std::min(d.next, d.samples.size() - 1);
    ++d.next;
  }
  const Sample& s = d.samples[d.current];
  const auto& table = type == RSMI_CLK_TYPE_SYS ? d.sys : d.mem;
  const auto& level = type == RSMI_CLK_TYPE_SYS ? s.sys : s.mem;
  if ((type != RSMI_CLK_TYPE_SYS && type != RSMI_CLK_TYPE_MEM) || !level) return RSMI_STATUS_NOT_SUPPORTED;
  if (version_major >= 6) {  // ROCm SMI 6.0 and later: a deep-sleep flag first, 33 levels
    auto* v6 = reinterpret_cast<FrequenciesV6*>(f);
    *v6 = FrequenciesV6{};
    v6->num_supported = static_cast<std::uint32_t>(std::min<std::size_t>(table.size(), 33));
    v6->current = *level;
    std::copy_n(table.begin(), v6->num_supported, v6->frequency);
    return RSMI_STATUS_SUCCESS;
  }
  *f = rsmi_frequencies_t{};
  f->num_supported =
      static_cast<std::uint32_t>(std::min<std::size_t>(table.size(), RSMI_MAX_NUM_FREQUENCIES));
  f->current = *level;
  std::copy_n(table.begin(), f->num_supported, f->frequency);
  return RSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) rsmi_status_t rsmi_dev_temp_metric_get(
    std::uint32_t index, std::uint32_t sensor, rsmi_temperature_metric_t metric, std::int64_t* millidegrees) {
  const Sample* s = current(index);
  if (!s || metric != RSMI_TEMP_CURRENT) return RSMI_STATUS_INVALID_ARGS;
  const auto& value = sensor == RSMI_TEMP_TYPE_EDGE       ? s->edge
                      : sensor == RSMI_TEMP_TYPE_JUNCTION ? s->junction
                                                          : std::nullopt;
  if (!value) return RSMI_STATUS_NOT_SUPPORTED;
  *millidegrees = *value;
  return RSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) rsmi_status_t rsmi_dev_power_ave_get(std::uint32_t index,
                                                                            std::uint32_t sensor,
                                                                            std::uint64_t* microwatts) {
  if (!current(index) || sensor != 0) return RSMI_STATUS_INVALID_ARGS;
  if (!kAverageKept) return RSMI_STATUS_NOT_SUPPORTED;
  return answer(index, &Sample::power, microwatts);
}

#ifndef KFORGE_FAKE_ROCM_SMI_NO_METRICS
__attribute__((visibility("default"))) rsmi_status_t rsmi_dev_gpu_metrics_info_get(
    std::uint32_t index, rsmi_gpu_metrics_t* metrics) {
  const Sample* s = current(index);
  if (!s) return RSMI_STATUS_INVALID_ARGS;
  if (!s->throttle) return RSMI_STATUS_NOT_SUPPORTED;
  *metrics = rsmi_gpu_metrics_t{};
  metrics->common_header.structure_size = static_cast<std::uint16_t>(table_bytes);
  metrics->common_header.format_revision = RSMI_GPU_METRICS_API_FORMAT_VER;
  metrics->common_header.content_revision = table_content;
  metrics->throttle_status = *s->throttle;
  std::memset(reinterpret_cast<unsigned char*>(metrics) + sizeof(rsmi_gpu_metrics_t), 0xa5,
              table_bytes - sizeof(rsmi_gpu_metrics_t));
  return RSMI_STATUS_SUCCESS;
}
#endif

#ifdef KFORGE_FAKE_ROCM_SMI_FIELD_GETTERS
__attribute__((visibility("default"))) rsmi_status_t rsmi_dev_metrics_throttle_status_get(std::uint32_t index,
                                                                                          std::uint32_t* status) {
  return answer(index, &Sample::throttle, status);
}

__attribute__((visibility("default"))) rsmi_status_t rsmi_dev_current_socket_power_get(std::uint32_t index,
                                                                                       std::uint64_t* microwatts) {
  return answer(index, &Sample::power, microwatts);
}

__attribute__((visibility("default"))) rsmi_status_t rsmi_dev_metrics_indep_throttle_status_get(
    std::uint32_t index, std::uint64_t* status) {
  return answer(index, &Sample::indep_throttle, status);
}
#endif

}  // extern "C"
