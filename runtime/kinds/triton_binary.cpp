// Triton launch records read into CompiledKernels with their LaunchAbi.
#include "runtime/kinds/triton_binary.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>

namespace kforge {

namespace {

/// The integer `metadata[key]`; `fallback` where absent, kBadInput where mistyped.
Result<std::int64_t> metadata_int(const nlohmann::json& metadata, const char* key, std::int64_t fallback) {
  if (!metadata.contains(key) || metadata[key].is_null()) return fallback;
  const auto& v = metadata[key];
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0)
    return Error::bad_input(std::string("metadata.") + key + ": expected a nonnegative integer, got " + v.dump());
  return v.get<std::int64_t>();
}

bool metadata_flag(const nlohmann::json& metadata, const char* key) {
  return metadata.contains(key) && metadata[key].is_boolean() && metadata[key].get<bool>();
}

/// The launches kforge does not make yet, named; empty when none applies.
std::string refused_launch(const nlohmann::json& metadata) {
  if (metadata_flag(metadata, "launch_cooperative_grid")) return "it needs a cooperative launch";
  if (metadata_flag(metadata, "launch_pdl")) return "it needs programmatic dependent launch (PDL)";
  if (metadata.contains("tensordesc_meta") && metadata["tensordesc_meta"].is_array() &&
      !metadata["tensordesc_meta"].empty())
    return "it takes tensor descriptors built on the host (device-side descriptors are launched)";
  return {};
}

/// The warp size: Triton's metadata where it says, else the target's (64 on CDNA).
int warp_size(const nlohmann::json& metadata) {
  if (metadata.contains("warp_size") && metadata["warp_size"].is_number_integer())
    return metadata["warp_size"].get<int>();
  const std::string target = metadata.value("target", std::string());
  return target.rfind("hip:", 0) == 0 ? 64 : 32;
}

Result<std::vector<AbiParameter>> abi_parameters(const nlohmann::json& parameters) {
  if (!parameters.is_array()) return Error::bad_input("parameters: expected a list of {name, type}");
  std::vector<AbiParameter> out;
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const auto& p = parameters[i];
    const std::string field = "parameters[" + std::to_string(i) + "]";
    if (!p.is_object() || !p.contains("name") || !p["name"].is_string() || !p.contains("type") ||
        !p["type"].is_string())
      return Error::bad_input(field + ": expected {\"name\": string, \"type\": string}");
    AbiParameter a{p["name"].get<std::string>(), p["type"].get<std::string>(), 0, false};
    auto bytes = triton_parameter_bytes(a.type);
    if (!bytes) return Error::bad_input(field + " (" + a.name + ").type: unknown Triton type '" + a.type + "'");
    a.bytes = *bytes;
    a.pointer = a.type.rfind('*', 0) == 0;
    out.push_back(std::move(a));
  }
  return out;
}

Result<std::vector<std::uint8_t>> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::bad_input(path.string() + ": cannot be read");
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

std::optional<int> triton_parameter_bytes(const std::string& type) {
  if (type.rfind('*', 0) == 0) return 8;
  static const std::map<std::string, int, std::less<>> kBytes = {
      {"i1", 1},   {"i8", 1},   {"u8", 1},    {"i16", 2},  {"u16", 2},  {"fp16", 2}, {"bf16", 2},
      {"i32", 4},  {"u32", 4},  {"fp32", 4},  {"i64", 8},  {"u64", 8},  {"fp64", 8}};
  auto it = kBytes.find(type);
  if (it == kBytes.end()) return std::nullopt;
  return it->second;
}

Result<LaunchAbi> triton_launch_abi(const nlohmann::json& metadata, const nlohmann::json& parameters) {
  if (!metadata.is_object()) return Error::bad_input("metadata: expected Triton's metadata object");
  const std::string kernel = metadata.value("name", std::string("the kernel"));
  if (auto why = refused_launch(metadata); !why.empty())
    return Error{ErrorCode::kUnsupported, kernel + " is not launched by kforge: " + why, {}};
  LaunchAbi abi;
  abi.compiler = "Triton " + metadata.value("triton_version", std::string("(unknown version)"));
  KF_TRY_ASSIGN(params, abi_parameters(parameters));
  abi.parameters = std::move(params);
  abi.scratch_pointers = true;
  KF_TRY_ASSIGN(warps, metadata_int(metadata, "num_warps", -1));
  if (warps <= 0) return Error::bad_input("metadata.num_warps: missing");
  abi.block_threads = static_cast<int>(warps) * warp_size(metadata);
  KF_TRY_ASSIGN(shared, metadata_int(metadata, "shared", 0));
  abi.dynamic_shared_bytes = static_cast<int>(shared);
  KF_TRY_ASSIGN(ctas, metadata_int(metadata, "num_ctas", 1));
  abi.cluster_ctas = static_cast<int>(std::max<std::int64_t>(ctas, 1));
  KF_TRY_ASSIGN(gs, metadata_int(metadata, "global_scratch_size", 0));
  KF_TRY_ASSIGN(ga, metadata_int(metadata, "global_scratch_align", 1));
  KF_TRY_ASSIGN(ps, metadata_int(metadata, "profile_scratch_size", 0));
  KF_TRY_ASSIGN(pa, metadata_int(metadata, "profile_scratch_align", 1));
  abi.global_scratch_bytes = gs;
  abi.global_scratch_align = std::max<std::int64_t>(ga, 1);
  abi.profile_scratch_bytes = ps;
  abi.profile_scratch_align = std::max<std::int64_t>(pa, 1);
  return abi;
}

Result<CompiledKernel> triton_compiled_kernel(const nlohmann::json& record, std::vector<std::uint8_t> binary) {
  if (!record.is_object()) return Error::bad_input("a Triton launch record must be a JSON object");
  if (!record.contains("kernel") || !record["kernel"].is_string())
    return Error::bad_input("kernel: expected the kernel's name");
  const auto format = parse_binary_format(record.value("format", std::string()));
  if (format != BinaryFormat::kCubin && format != BinaryFormat::kHsaco)
    return Error::bad_input("format: expected \"cubin\" or \"hsaco\", got " +
                            (record.contains("format") ? record["format"].dump() : std::string("nothing")));
  nlohmann::json metadata = record.contains("metadata") ? record["metadata"] : nlohmann::json();
  if (metadata.is_object() && !metadata.contains("triton_version") && record.contains("triton_version"))
    metadata["triton_version"] = record["triton_version"];
  KF_TRY_ASSIGN(abi, triton_launch_abi(metadata, record.contains("parameters") ? record["parameters"] : nlohmann::json()));
  CompiledKernel k;
  k.kernel_name = record["kernel"].get<std::string>();
  k.format = *format;
  k.binary = std::move(binary);
  KF_TRY(check_recorded_parameters(abi, k.format, k.binary, k.kernel_name));
  k.options = metadata.dump();
  k.abi = std::make_shared<const LaunchAbi>(std::move(abi));
  return k;
}

void apply_triton_arguments(LaunchAbi& abi, const nlohmann::json& request) {
  abi.argument_map.clear();
  abi.workspaces.clear();
  for (const auto& a : request["arguments"]) {
    if (a.contains("workspace")) {
      const std::string name = a["name"].get<std::string>();
      const std::string type = request["signature"].value(name, std::string("*i8"));
      abi.argument_map.push_back({-1, 0, static_cast<int>(abi.workspaces.size())});
      abi.workspaces.push_back({name, a["workspace"].get<std::int64_t>(),
                                triton_parameter_bytes(type.substr(1)).value_or(1), a.value("zeroed", false)});
    } else if (a.contains("from")) {
      abi.argument_map.push_back({a["from"].get<int>(), 0});
    } else {
      abi.argument_map.push_back({-1, a["value"].get<std::int32_t>()});
    }
  }
}

Result<CompiledKernel> read_triton_kernel(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return Error::bad_input(path.string() + ": cannot be read");
  nlohmann::json record = nlohmann::json::parse(in, nullptr, false);
  if (record.is_discarded()) return Error::bad_input(path.string() + ": not valid JSON");
  const std::string binary_name = record.is_object() ? record.value("binary", std::string()) : std::string();
  if (binary_name.empty()) return Error::bad_input(path.string() + ": binary: expected the binary's file name");
  KF_TRY_ASSIGN(bytes, read_bytes(path.parent_path() / binary_name));
  auto kernel = triton_compiled_kernel(record, std::move(bytes));
  if (!kernel.ok()) {
    Error e = kernel.error();
    e.message = path.string() + ": " + e.message;
    return e;
  }
  return kernel;
}

}  // namespace kforge
