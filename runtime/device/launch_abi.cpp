// A launch ABI's parameter list against the table in the binary.
#include "runtime/device/launch_abi.hpp"

#include <array>
#include <utility>

#include "runtime/binaries/code_object_reader.hpp"
#include "runtime/binaries/cubin_attributes.hpp"
#include "runtime/binaries/elf_image.hpp"

namespace kforge {

namespace {

constexpr std::array<std::pair<BinaryFormat, std::string_view>, 6> kFormats = {{
    {BinaryFormat::kUnknown, "unknown"},
    {BinaryFormat::kOpenClBinary, "opencl"},
    {BinaryFormat::kPtx, "ptx"},
    {BinaryFormat::kCubin, "cubin"},
    {BinaryFormat::kHsaco, "hsaco"},
    {BinaryFormat::kTritonSource, "triton-source"},
}};

std::string sizes_text(const std::vector<int>& bytes) {
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); ++i) out += (i ? " " : "") + std::to_string(bytes[i]);
  return out;
}

Result<std::vector<int>> cubin_parameter_bytes(std::span<const std::uint8_t> binary, const std::string& kernel) {
  KF_TRY_ASSIGN(image, read_elf_image(binary));
  KF_TRY_ASSIGN(info, read_cubin_info(image));
  for (const auto& k : info.kernels) {
    if (k.name != kernel) continue;
    std::vector<int> bytes;
    for (const auto& p : k.parameters) {
      if (p.ordinal != static_cast<int>(bytes.size()))
        return Error::bad_input("cubin: " + kernel + ": parameter " + std::to_string(bytes.size()) +
                                " is missing from EIATTR_KPARAM_INFO");
      bytes.push_back(p.bytes);
    }
    return bytes;
  }
  return Error::bad_input("cubin: no kernel '" + kernel + "'");
}

Result<std::vector<int>> hsaco_parameter_bytes(std::span<const std::uint8_t> binary, const std::string& kernel) {
  KF_TRY_ASSIGN(co, read_amd_code_object(binary));
  const AmdKernelMetadata* k = co.find(kernel);
  if (!k) return Error::bad_input("code object: no kernel '" + kernel + "'");
  std::vector<int> bytes;
  for (const auto& a : k->arguments)
    if (!a.hidden()) bytes.push_back(static_cast<int>(a.bytes));
  return bytes;
}

}  // namespace

std::string_view name(BinaryFormat format) {
  for (const auto& [f, text] : kFormats)
    if (f == format) return text;
  return "unknown";
}

std::optional<BinaryFormat> parse_binary_format(std::string_view text) {
  for (const auto& [f, name] : kFormats)
    if (name == text) return f;
  return std::nullopt;
}

std::vector<int> LaunchAbi::binary_parameter_bytes() const {
  std::vector<int> bytes;
  for (const auto& p : parameters) bytes.push_back(p.bytes);
  if (scratch_pointers) bytes.insert(bytes.end(), {8, 8});
  return bytes;
}

Result<std::vector<int>> recorded_parameter_bytes(BinaryFormat format, std::span<const std::uint8_t> binary,
                                                  const std::string& kernel_name) {
  switch (format) {
    case BinaryFormat::kCubin:
      return cubin_parameter_bytes(binary, kernel_name);
    case BinaryFormat::kHsaco:
      return hsaco_parameter_bytes(binary, kernel_name);
    default:
      return Error::bad_input(kernel_name + ": a " + std::string(name(format)) +
                              " binary carries no parameter table kforge reads");
  }
}

Status check_recorded_parameters(const LaunchAbi& abi, BinaryFormat format, std::span<const std::uint8_t> binary,
                                 const std::string& kernel_name) {
  auto recorded = recorded_parameter_bytes(format, binary, kernel_name);
  if (!recorded.ok()) {
    return Error::bad_input(kernel_name + ": cannot check its parameters against the binary (" +
                            recorded.error().message + "); not launched unchecked");
  }
  const std::vector<int> expected = abi.binary_parameter_bytes();
  if (*recorded == expected) return ok_status();
  return Error::bad_input(kernel_name + ": the " + std::string(name(format)) + " takes " +
                          std::to_string(recorded->size()) + " parameters of " + sizes_text(*recorded) +
                          " bytes, " + abi.compiler + "'s signature " + std::to_string(expected.size()) +
                          " of " + sizes_text(expected) + " bytes");
}

std::int64_t scratch_bytes(std::int64_t per_program, std::int64_t programs, int cluster_ctas) {
  return per_program > 0 ? per_program * programs * cluster_ctas : 0;
}

}  // namespace kforge
