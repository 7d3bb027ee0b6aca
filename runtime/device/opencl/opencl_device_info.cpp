// OpenCL device enumeration and fingerprint: vendor, architecture, SIMD
// width, compiler and versions from the platform and device queries.
#include "runtime/device/opencl/opencl_device_info.hpp"

#include <CL/cl_ext.h>
#include <sys/utsname.h>

#include <array>
#include <cstdint>
#include <fstream>
#include <string_view>

#include "runtime/device/host/host_cpus.hpp"
#include "runtime/device/opencl/opencl_api.hpp"
#include "runtime/device/opencl/opencl_backend.hpp"

namespace kforge::opencl {

namespace {

// cl_nv_device_attribute_query's PCI queries, which the Khronos header
// leaves out (the domain only in newer drivers).
constexpr cl_device_info kPciBusIdNv = 0x4008;
constexpr cl_device_info kPciSlotIdNv = 0x4009;
constexpr cl_device_info kPciDomainIdNv = 0x400A;

std::string host_machine() {
  utsname u{};
  return uname(&u) == 0 ? std::string(u.machine) : std::string("unknown");
}

DeviceType device_type_of(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return DeviceType::kGpu;
  if (t & CL_DEVICE_TYPE_CPU) return DeviceType::kCpu;
  return DeviceType::kAccelerator;  // CL_DEVICE_TYPE_ACCELERATOR and CL_DEVICE_TYPE_CUSTOM
}

/// PoCL names CPU devices "pthread-<llvm cpu>-<host model name>" (or
/// "basic-..."); the LLVM CPU name is what the kernels are compiled for.
std::string pocl_cpu_name(const std::string& device_name, const std::string& host_model) {
  auto dash = device_name.find('-');
  if (dash == std::string::npos) return device_name;
  std::string rest = device_name.substr(dash + 1);
  const std::string suffix = "-" + host_model;
  if (!host_model.empty() && rest.size() > suffix.size() && rest.ends_with(suffix)) {
    return rest.substr(0, rest.size() - suffix.size());
  }
  return rest.substr(0, rest.find('-'));
}

std::string device_arch(cl_device_id d, const DeviceInfo& info, const std::string& extensions, bool is_pocl) {
  if (info.device_type == DeviceType::kCpu) {
    std::string cpu = is_pocl ? pocl_cpu_name(info.name, info.host_cpu) : info.name;
    return host_machine() + "-" + cpu;
  }
  if (contains(extensions, "cl_nv_device_attribute_query")) {
    auto major = device_value<cl_uint>(d, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV);
    auto minor = device_value<cl_uint>(d, CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV);
    if (major > 0) return "sm_" + std::to_string(major) + std::to_string(minor);
  }
  if (contains(extensions, "cl_amd_device_attribute_query") ||
      contains(info.vendor, "Advanced Micro Devices")) {
    // ROCm names the device "gfx90a:sramecc+:xnack-"; the board name is the
    // marketing name. Keep the gfx target without feature flags.
    for (const std::string& candidate : {info.name, device_string(d, CL_DEVICE_BOARD_NAME_AMD)}) {
      if (candidate.rfind("gfx", 0) == 0) return candidate.substr(0, candidate.find(':'));
    }
  }
  return info.name;
}

std::int64_t device_simd_width(cl_device_id d, DeviceType device_type, const std::string& extensions) {
  if (device_type == DeviceType::kCpu) return 1;
  if (contains(extensions, "cl_nv_device_attribute_query")) {
    if (auto w = device_value<cl_uint>(d, CL_DEVICE_WARP_SIZE_NV); w > 0) return w;
  }
  if (contains(extensions, "cl_amd_device_attribute_query")) {
    if (auto w = device_value<cl_uint>(d, CL_DEVICE_WAVEFRONT_WIDTH_AMD); w > 0) return w;
  }
  return 32;
}

/// "OpenCL 3.0 PoCL 3.1+debian  Linux, ..., LLVM 15.0.6, ..." -> "3.1+debian LLVM 15.0.6".
std::string pocl_compiler_version(const std::string& platform_version) {
  auto word_after = [&](std::string_view key) -> std::string {
    auto pos = platform_version.find(key);
    if (pos == std::string::npos) return {};
    pos += key.size();
    auto end = platform_version.find_first_of(" ,", pos);
    return platform_version.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
  };
  std::string pocl = word_after("PoCL ");
  std::string llvm = word_after("LLVM ");
  if (pocl.empty()) return platform_version;
  return llvm.empty() ? pocl : pocl + " LLVM " + llvm;
}

}  // namespace

std::optional<PciBusAddress> device_pci_address(cl_device_id d, const std::string& extensions) {
  if (contains(extensions, "cl_khr_pci_bus_info")) {
    cl_device_pci_bus_info_khr info{};
    if (clGetDeviceInfo(d, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof info, &info, nullptr) == CL_SUCCESS) {
      return PciBusAddress{info.pci_domain, info.pci_bus, info.pci_device, info.pci_function};
    }
  }
  if (contains(extensions, "cl_nv_device_attribute_query")) {
    cl_uint bus = 0, slot = 0, domain = 0;
    if (clGetDeviceInfo(d, kPciBusIdNv, sizeof bus, &bus, nullptr) == CL_SUCCESS &&
        clGetDeviceInfo(d, kPciSlotIdNv, sizeof slot, &slot, nullptr) == CL_SUCCESS) {
      const bool has_domain =
          clGetDeviceInfo(d, kPciDomainIdNv, sizeof domain, &domain, nullptr) == CL_SUCCESS;
      return pci_from_nv(bus, slot, has_domain ? std::optional<std::uint32_t>(domain) : std::nullopt);
    }
  }
  if (contains(extensions, "cl_amd_device_attribute_query")) {
    std::array<unsigned char, 24> topology{};
    static_assert(sizeof(cl_device_topology_amd) == 24);
    if (clGetDeviceInfo(d, CL_DEVICE_TOPOLOGY_AMD, topology.size(), topology.data(), nullptr) == CL_SUCCESS) {
      return pci_from_amd_topology(topology);
    }
  }
  return std::nullopt;
}

std::vector<ClDeviceRef> enumerate_devices() {
  std::vector<ClDeviceRef> out;
  cl_uint num_platforms = 0;
  // No ICD at all yields CL_PLATFORM_NOT_FOUND_KHR from the loader: not an error.
  if (clGetPlatformIDs(0, nullptr, &num_platforms) != CL_SUCCESS || num_platforms == 0) return out;
  std::vector<cl_platform_id> platforms(num_platforms);
  if (clGetPlatformIDs(num_platforms, platforms.data(), nullptr) != CL_SUCCESS) return out;
  for (cl_platform_id p : platforms) {
    cl_uint num_devices = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &num_devices) != CL_SUCCESS) continue;
    std::vector<cl_device_id> devices(num_devices);
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, num_devices, devices.data(), nullptr) != CL_SUCCESS) {
      continue;
    }
    for (cl_device_id d : devices) out.push_back({p, d});
  }
  return out;
}

DeviceInfo describe(const ClDeviceRef& ref, std::size_t index) {
  cl_device_id d = ref.device;
  DeviceInfo info;
  info.selector = "opencl:" + std::to_string(index);
  info.backend = "opencl";
  info.vendor = trim(device_string(d, CL_DEVICE_VENDOR));
  info.name = trim(device_string(d, CL_DEVICE_NAME));
  info.device_type = device_type_of(device_value<cl_device_type>(d, CL_DEVICE_TYPE));
  info.compute_units = device_value<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS);
  info.clock_mhz = device_value<cl_uint>(d, CL_DEVICE_MAX_CLOCK_FREQUENCY);
  auto bytes = [d](cl_device_info what) {
    return static_cast<std::int64_t>(device_value<cl_ulong>(d, what));
  };
  info.global_mem_bytes = bytes(CL_DEVICE_GLOBAL_MEM_SIZE);
  info.max_alloc_bytes = bytes(CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  info.local_mem_bytes = bytes(CL_DEVICE_LOCAL_MEM_SIZE);
  info.max_shared_bytes = info.local_mem_bytes;  // OpenCL has no opt-in
  info.cache_bytes = bytes(CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
  info.cache_line_bytes = device_value<cl_uint>(d, CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE);
  info.max_block_threads =
      static_cast<std::int64_t>(device_value<std::size_t>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE));
  const std::string extensions = device_string(d, CL_DEVICE_EXTENSIONS);
  info.simd_width = device_simd_width(d, info.device_type, extensions);
  info.fp64 = device_value<cl_device_fp_config>(d, CL_DEVICE_DOUBLE_FP_CONFIG) != 0;
  info.driver_version = trim(device_string(d, CL_DRIVER_VERSION));
  info.runtime_version = trim(platform_string(ref.platform, CL_PLATFORM_VERSION));
  const std::string platform_name = trim(platform_string(ref.platform, CL_PLATFORM_NAME));
  const bool is_pocl = platform_name == "Portable Computing Language";
  info.compiler = is_pocl ? kPoclCompiler : platform_name;
  // PoCL's platform version names PoCL and its LLVM; other drivers compile
  // OpenCL C inside the driver, so the driver version is the compiler's.
  info.compiler_version = is_pocl ? pocl_compiler_version(info.runtime_version) : info.driver_version;
  info.host_cpu = host_cpu_model();
  info.arch = device_arch(d, info, extensions, is_pocl);
  return info;
}

}  // namespace kforge::opencl

namespace kforge {

std::vector<DeviceInfo> list_opencl_devices() {
  std::vector<DeviceInfo> out;
  const auto refs = opencl::enumerate_devices();
  for (std::size_t i = 0; i < refs.size(); ++i) out.push_back(opencl::describe(refs[i], i));
  return out;
}

}  // namespace kforge
