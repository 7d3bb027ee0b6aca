// `kforge devices`: every device every backend sees, with its fingerprint.
#include "runtime/device/device_registry.hpp"
#include "tools/commands.hpp"

namespace kforge::cli {

void add_devices_command(CLI::App& app, CommonOptions& o) {
  auto* cmd = app.add_subcommand("devices", "List the devices kforge can tune on, with their fingerprints");
  add_json_flag(*cmd, o);
  cmd->callback([&o] {
    auto devices = list_devices();
    if (o.json) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& d : devices) {
        auto e = d.to_json();
        e["hardware_key"] = d.hardware_key();
        j.push_back(e);
      }
      print_json(j);
      return;
    }
    if (devices.empty()) {
      std::cout << "no devices found (install an OpenCL driver, e.g. pocl-opencl-icd)\n";
      return;
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& d : devices) {
      rows.push_back({d.selector, d.backend, std::string(device_type_name(d.device_type)), d.name, d.arch,
                      std::to_string(d.compute_units), std::to_string(d.global_mem_bytes >> 20) + " MiB",
                      d.compiler + " " + d.compiler_version});
    }
    print_table({"selector", "backend", "type", "name", "arch", "CUs", "memory", "compiler"}, rows);
  });
}

}  // namespace kforge::cli
