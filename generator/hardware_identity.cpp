// HardwareIdentity: the device key and the key it replaced.
#include "generator/hardware_identity.hpp"

#include "core/hash.hpp"

namespace kforge {
namespace {

Hasher stable_part(const HardwareIdentity& d) {
  Hasher h;
  h.add(d.backend).add(d.vendor).add(d.name).add(d.arch).add(std::to_string(d.compute_units));
  return h;
}

}  // namespace

std::string HardwareIdentity::key() const {
  Hasher h = stable_part(*this);
  // A GPU's or accelerator's memory is its own and fixed: it tells boards
  // of one model with different memory apart.
  if (device_type != "cpu") h.add(std::to_string(global_mem_bytes));
  return h.hex();
}

std::string HardwareIdentity::key_before_v3() const {
  return stable_part(*this).add(std::to_string(global_mem_bytes)).hex();
}

std::optional<HardwareIdentity> HardwareIdentity::from_json(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  HardwareIdentity d;
  auto text = [&j](const char* key, std::string& field) {
    if (auto it = j.find(key); it != j.end() && it->is_string()) field = it->get<std::string>();
  };
  auto number = [&j](const char* key, std::int64_t& field) {
    if (auto it = j.find(key); it != j.end() && it->is_number_integer()) field = it->get<std::int64_t>();
  };
  text("backend", d.backend);
  text("vendor", d.vendor);
  text("name", d.name);
  text("arch", d.arch);
  text("device_type", d.device_type);
  number("compute_units", d.compute_units);
  number("global_mem_bytes", d.global_mem_bytes);
  return d;
}

}  // namespace kforge
