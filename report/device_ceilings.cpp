// Device peak throughput: the built-in datasheet table and --ceilings files.
#include "report/device_ceilings.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "report/tuning_facts.hpp"

#include "core/bounded_json.hpp"

namespace kforge::report {

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool matches(const DeviceCeilings& c, const DeviceRecord& d) {
  if (!c.backend.empty() && c.backend != d.backend) return false;
  return !c.match.empty() && lower(d.name).find(lower(c.match)) != std::string::npos;
}

}  // namespace

const std::vector<DeviceCeilings>& builtin_ceilings() {
  // Vendor datasheets; FP32 is the vector (non-tensor) rate, FP16 the dense
  // tensor/matrix rate (no sparsity). A kernel's attainable peak is lower.
  static const std::vector<DeviceCeilings> table = {
      {"H200", "", 67000, 989000, 4800, "NVIDIA H200 SXM datasheet"},
      {"H100 PCIe", "", 51000, 756000, 2000, "NVIDIA H100 PCIe datasheet"},
      {"H100", "", 67000, 989000, 3350, "NVIDIA H100 SXM5 datasheet"},
      {"A100-SXM4-80GB", "", 19500, 312000, 2039, "NVIDIA A100 80GB SXM datasheet"},
      {"A100", "", 19500, 312000, 1555, "NVIDIA A100 40GB datasheet"},
      {"MI300X", "", 81700, 1307400, 5300, "AMD Instinct MI300X datasheet"},
      {"MI250X", "", 47900, 383000, 3276.8, "AMD Instinct MI250X datasheet"},
      {"MI210", "", 22600, 181000, 1638.4, "AMD Instinct MI210 datasheet"},
  };
  return table;
}

Result<std::vector<DeviceCeilings>> load_ceilings(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::bad_input(path + ": cannot open ceilings file");
  std::stringstream text;
  text << in.rdbuf();
  KF_TRY_ASSIGN(j, parse_json_bounded(text.str(), path));
  if (!j.is_array()) return Error::bad_input(path + ": expected a JSON array of device ceilings");
  std::vector<DeviceCeilings> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string at = path + ": [" + std::to_string(i) + "]";
    const auto& e = j[i];
    if (!e.is_object()) return Error::bad_input(at + ": expected an object");
    DeviceCeilings c;
    for (const auto& item : e.items()) {
      const std::string& k = item.key();
      const auto& v = item.value();
      if (k == "match" || k == "backend" || k == "source") {
        if (!v.is_string()) return Error::bad_input(at + "." + k + ": expected a string, got " + v.dump());
        (k == "match" ? c.match : k == "backend" ? c.backend : c.source) = v.get<std::string>();
      } else if (k == "fp32_gflops" || k == "fp16_gflops" || k == "bandwidth_gbs") {
        if (!v.is_number() || v.get<double>() < 0) {
          return Error::bad_input(at + "." + k + ": expected a non-negative number, got " + v.dump());
        }
        (k == "fp32_gflops" ? c.fp32_gflops : k == "fp16_gflops" ? c.fp16_gflops : c.bandwidth_gbs) = v.get<double>();
      } else {
        return Error::bad_input(at + "." + k + ": unknown field");
      }
    }
    if (c.match.empty()) return Error::bad_input(at + ".match: missing or empty");
    if (c.source.empty()) c.source = path;
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

std::optional<DeviceCeilings> from_tables(const DeviceRecord& d, const std::vector<DeviceCeilings>& user) {
  for (const auto* table : {&user, &builtin_ceilings()}) {
    auto it = std::find_if(table->begin(), table->end(), [&](const DeviceCeilings& c) { return matches(c, d); });
    if (it != table->end()) return *it;
  }
  return std::nullopt;
}

}  // namespace

std::optional<DeviceCeilings> find_ceilings(const DeviceRecord& d, const std::vector<DeviceCeilings>& user,
                                            const std::vector<MeasuredCeilingRecord>& measured) {
  std::optional<DeviceCeilings> c = from_tables(d, user);
  std::string what;
  for (const MeasuredCeilingRecord& m : measured) {
    if (m.device_key != d.key) continue;
    if (!c) c = DeviceCeilings{d.name, d.backend, 0, 0, 0, "", false, false};
    if (m.name == "copy_bandwidth") {
      c->bandwidth_gbs = m.value, c->measured_bandwidth = true;
      what += (what.empty() ? "" : ", ") + std::string("copy ") + short_number(m.value) + " GB/s";
    } else if (m.name == "fp32_fma") {
      c->fp32_gflops = m.value, c->measured_fp32 = true;
      what += (what.empty() ? "" : ", ") + std::string("FP32 FMA ") + short_number(m.value) + " GFLOP/s";
    }
  }
  if (!what.empty()) {
    const std::string rest = c->source.empty() || c->fp16_gflops <= 0 ? "" : "; FP16 tensor: " + c->source;
    c->source = "measured by kforge ceilings (" + what + ")" + rest;
  }
  return c;
}

}  // namespace kforge::report
