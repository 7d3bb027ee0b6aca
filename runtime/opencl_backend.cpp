// OpenCL backend: device enumeration and fingerprint, runtime compilation,
// buffers, launches timed with profiling events, cache flush.
#include "opencl_backend.hpp"

#include "cpu_clock_reader.hpp"
#include "host_cache_eviction.hpp"
#include "pci_clock_reader.hpp"

#include <sys/utsname.h>

#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace kforge {

const char* cl_error_name(int code) {
  switch (code) {
#define KF_CL_ERROR(name) \
  case name: return #name;
    KF_CL_ERROR(CL_SUCCESS)
    KF_CL_ERROR(CL_DEVICE_NOT_FOUND)
    KF_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    KF_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    KF_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    KF_CL_ERROR(CL_OUT_OF_RESOURCES)
    KF_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    KF_CL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE)
    KF_CL_ERROR(CL_MEM_COPY_OVERLAP)
    KF_CL_ERROR(CL_IMAGE_FORMAT_MISMATCH)
    KF_CL_ERROR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    KF_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    KF_CL_ERROR(CL_MAP_FAILURE)
    KF_CL_ERROR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    KF_CL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    KF_CL_ERROR(CL_COMPILE_PROGRAM_FAILURE)
    KF_CL_ERROR(CL_LINKER_NOT_AVAILABLE)
    KF_CL_ERROR(CL_LINK_PROGRAM_FAILURE)
    KF_CL_ERROR(CL_DEVICE_PARTITION_FAILED)
    KF_CL_ERROR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    KF_CL_ERROR(CL_INVALID_VALUE)
    KF_CL_ERROR(CL_INVALID_DEVICE_TYPE)
    KF_CL_ERROR(CL_INVALID_PLATFORM)
    KF_CL_ERROR(CL_INVALID_DEVICE)
    KF_CL_ERROR(CL_INVALID_CONTEXT)
    KF_CL_ERROR(CL_INVALID_QUEUE_PROPERTIES)
    KF_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    KF_CL_ERROR(CL_INVALID_HOST_PTR)
    KF_CL_ERROR(CL_INVALID_MEM_OBJECT)
    KF_CL_ERROR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    KF_CL_ERROR(CL_INVALID_IMAGE_SIZE)
    KF_CL_ERROR(CL_INVALID_SAMPLER)
    KF_CL_ERROR(CL_INVALID_BINARY)
    KF_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    KF_CL_ERROR(CL_INVALID_PROGRAM)
    KF_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    KF_CL_ERROR(CL_INVALID_KERNEL_NAME)
    KF_CL_ERROR(CL_INVALID_KERNEL_DEFINITION)
    KF_CL_ERROR(CL_INVALID_KERNEL)
    KF_CL_ERROR(CL_INVALID_ARG_INDEX)
    KF_CL_ERROR(CL_INVALID_ARG_VALUE)
    KF_CL_ERROR(CL_INVALID_ARG_SIZE)
    KF_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    KF_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    KF_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    KF_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
    KF_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    KF_CL_ERROR(CL_INVALID_EVENT_WAIT_LIST)
    KF_CL_ERROR(CL_INVALID_EVENT)
    KF_CL_ERROR(CL_INVALID_OPERATION)
    KF_CL_ERROR(CL_INVALID_GL_OBJECT)
    KF_CL_ERROR(CL_INVALID_BUFFER_SIZE)
    KF_CL_ERROR(CL_INVALID_MIP_LEVEL)
    KF_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
    KF_CL_ERROR(CL_INVALID_PROPERTY)
    KF_CL_ERROR(CL_INVALID_IMAGE_DESCRIPTOR)
    KF_CL_ERROR(CL_INVALID_COMPILER_OPTIONS)
    KF_CL_ERROR(CL_INVALID_LINKER_OPTIONS)
    KF_CL_ERROR(CL_INVALID_DEVICE_PARTITION_COUNT)
    KF_CL_ERROR(CL_PLATFORM_NOT_FOUND_KHR)
#undef KF_CL_ERROR
    // OpenCL 2.0+ codes, by value: the 1.2 headers kforge targets lack the names.
    case -69: return "CL_INVALID_PIPE_SIZE";
    case -70: return "CL_INVALID_DEVICE_QUEUE";
    case -71: return "CL_INVALID_SPEC_ID";
    case -72: return "CL_MAX_SIZE_RESTRICTION_EXCEEDED";
    default: return "CL_UNKNOWN_ERROR";
  }
}

namespace {

std::string cl_error_text(cl_int code) {
  std::string name = cl_error_name(code);
  if (name == "CL_UNKNOWN_ERROR") name += " (" + std::to_string(code) + ")";
  return name;
}

Error cl_error(ErrorCode code, const std::string& what, cl_int err) {
  return Error{code, what + ": " + cl_error_text(err), {}};
}

// ---- RAII over OpenCL handles ----------------------------------------------

template <typename T, cl_int (*Release)(T)>
struct ClReleaser {
  void operator()(T h) const {
    if (h) Release(h);
  }
};
template <typename T, cl_int (*Release)(T)>
using ClHandle = std::unique_ptr<std::remove_pointer_t<T>, ClReleaser<T, Release>>;

using ContextHandle = ClHandle<cl_context, clReleaseContext>;
using QueueHandle = ClHandle<cl_command_queue, clReleaseCommandQueue>;
using ProgramHandle = ClHandle<cl_program, clReleaseProgram>;
using KernelHandle = ClHandle<cl_kernel, clReleaseKernel>;
using MemHandle = ClHandle<cl_mem, clReleaseMemObject>;
using EventHandle = ClHandle<cl_event, clReleaseEvent>;

// ---- info queries ------------------------------------------------------------

std::string platform_string(cl_platform_id p, cl_platform_info what) {
  std::size_t size = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string s(size, '\0');
  if (clGetPlatformInfo(p, what, size, s.data(), nullptr) != CL_SUCCESS) return {};
  s.resize(std::strlen(s.c_str()));
  return s;
}

std::string device_string(cl_device_id d, cl_device_info what) {
  std::size_t size = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string s(size, '\0');
  if (clGetDeviceInfo(d, what, size, s.data(), nullptr) != CL_SUCCESS) return {};
  s.resize(std::strlen(s.c_str()));
  return s;
}

/// A scalar device property; 0 when the query fails (e.g. an absent extension).
template <typename T>
T device_value(cl_device_id d, cl_device_info what) {
  T v{};
  if (clGetDeviceInfo(d, what, sizeof v, &v, nullptr) != CL_SUCCESS) return T{};
  return v;
}

std::string trim(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// cl_nv_device_attribute_query's PCI queries, which the Khronos header
// leaves out (the domain only in newer drivers).
constexpr cl_device_info kPciBusIdNv = 0x4008;
constexpr cl_device_info kPciSlotIdNv = 0x4009;
constexpr cl_device_info kPciDomainIdNv = 0x400A;

/// Where a GPU sits on the PCI bus: cl_khr_pci_bus_info, else the NVIDIA or
/// AMD query (pci_clock_reader.hpp); nullopt when the device tells none.
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
      const bool has_domain = clGetDeviceInfo(d, kPciDomainIdNv, sizeof domain, &domain, nullptr) == CL_SUCCESS;
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

/// Host CPU model from /proc/cpuinfo ("model name"); the machine name where absent.
const std::string& host_cpu_model() {
  static const std::string model = [] {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("model name", 0) == 0) {
        auto colon = line.find(':');
        if (colon != std::string::npos) return trim(line.substr(colon + 1));
      }
    }
    utsname u{};
    return uname(&u) == 0 ? std::string(u.machine) : std::string("unknown");
  }();
  return model;
}

std::string host_machine() {
  utsname u{};
  return uname(&u) == 0 ? std::string(u.machine) : std::string("unknown");
}

std::string device_type_name(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return "gpu";
  if (t & CL_DEVICE_TYPE_CPU) return "cpu";
  return "accelerator";  // CL_DEVICE_TYPE_ACCELERATOR and CL_DEVICE_TYPE_CUSTOM
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

std::string device_arch(cl_device_id d, const DeviceInfo& info, const std::string& extensions,
                        bool is_pocl) {
  if (info.device_type == "cpu") {
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

std::int64_t device_simd_width(cl_device_id d, const std::string& device_type,
                               const std::string& extensions) {
  if (device_type == "cpu") return 1;
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

struct ClDeviceRef {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
};

/// Every device of every platform, in platform then device order.
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
  info.device_type = device_type_name(device_value<cl_device_type>(d, CL_DEVICE_TYPE));
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
  info.driver_version = trim(device_string(d, CL_DRIVER_VERSION));
  info.runtime_version = trim(platform_string(ref.platform, CL_PLATFORM_VERSION));
  const std::string platform_name = trim(platform_string(ref.platform, CL_PLATFORM_NAME));
  const bool is_pocl = platform_name == "Portable Computing Language";
  info.compiler = is_pocl ? "pocl" : platform_name;
  // PoCL's platform version names PoCL and its LLVM; other drivers compile
  // OpenCL C inside the driver, so the driver version is the compiler's.
  info.compiler_version =
      is_pocl ? pocl_compiler_version(info.runtime_version) : info.driver_version;
  info.host_cpu = host_cpu_model();
  info.arch = device_arch(d, info, extensions, is_pocl);
  return info;
}

// ---- objects -----------------------------------------------------------------

/// The host memory that a CPU device's buffers live in, which its cache
/// flush evicts line by line (OpenClDevice::flush_cache). Shared with the
/// buffers, which may outlive the device.
class HostBufferRanges {
 public:
  void add(const void* data, std::size_t bytes) {
    std::lock_guard lock(mu_);
    ranges_[data] = bytes;
    bytes_ += bytes;
  }
  void remove(const void* data) {
    std::lock_guard lock(mu_);
    if (auto it = ranges_.find(data); it != ranges_.end()) {
      bytes_ -= it->second;
      ranges_.erase(it);
    }
  }
  std::size_t bytes() const {
    std::lock_guard lock(mu_);
    return bytes_;
  }
  void evict_all() const {
    std::lock_guard lock(mu_);
    for (const auto& [data, bytes] : ranges_) evict_host_range(data, bytes);
  }

 private:
  mutable std::mutex mu_;
  std::map<const void*, std::size_t> ranges_;
  std::size_t bytes_ = 0;
};

class OpenClBuffer final : public Buffer {
 public:
  OpenClBuffer(MemHandle mem, std::size_t size) : mem_(std::move(mem)), size_(size) {}
  /// A buffer in host memory the device uses in place, listed in `ranges`
  /// while it lives.
  OpenClBuffer(MemHandle mem, std::size_t size, const void* host, std::shared_ptr<HostBufferRanges> ranges)
      : mem_(std::move(mem)), size_(size), host_(host), ranges_(std::move(ranges)) {
    ranges_->add(host_, size_);
  }
  ~OpenClBuffer() override {
    if (ranges_) ranges_->remove(host_);
  }
  OpenClBuffer(const OpenClBuffer&) = delete;
  OpenClBuffer& operator=(const OpenClBuffer&) = delete;
  std::size_t size() const override { return size_; }
  cl_mem mem() const { return mem_.get(); }

 private:
  MemHandle mem_;
  std::size_t size_;
  const void* host_ = nullptr;
  std::shared_ptr<HostBufferRanges> ranges_;
};

class OpenClKernel final : public Kernel {
 public:
  OpenClKernel(std::string name, ProgramHandle program, KernelHandle kernel, ResourceReport res)
      : name_(std::move(name)),
        program_(std::move(program)),
        kernel_(std::move(kernel)),
        resources_(res) {}
  const std::string& name() const override { return name_; }
  ResourceReport resources() const override { return resources_; }
  cl_kernel handle() const { return kernel_.get(); }

 private:
  std::string name_;
  ProgramHandle program_;
  KernelHandle kernel_;
  ResourceReport resources_;
};

std::string build_log(cl_program program, cl_device_id device) {
  std::size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) !=
          CL_SUCCESS ||
      size == 0) {
    return {};
  }
  std::string log(size, '\0');
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) !=
      CL_SUCCESS) {
    return {};
  }
  log.resize(std::strlen(log.c_str()));
  return log;
}

/// The line of a build log that names the first error; else its first non-empty line.
std::string first_error_line(const std::string& log) {
  std::string first_nonempty;
  std::size_t pos = 0;
  while (pos < log.size()) {
    auto end = log.find('\n', pos);
    const std::size_t len = end == std::string::npos ? std::string::npos : end - pos;
    const std::string line = trim(log.substr(pos, len));
    pos = end == std::string::npos ? log.size() : end + 1;
    if (line.empty()) continue;
    if (first_nonempty.empty()) first_nonempty = line;
    if (contains(line, "error")) return line;
  }
  return first_nonempty;
}

/// Resources of a built kernel as the runtime reports them.
ResourceReport kernel_resources(cl_kernel kernel, cl_device_id device) {
  ResourceReport r;
  cl_ulong local_mem = 0;
  if (clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local_mem,
                               &local_mem, nullptr) == CL_SUCCESS) {
    r.local_mem_bytes = static_cast<std::int64_t>(local_mem);
  }
  cl_ulong private_mem = 0;
  if (clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof private_mem,
                               &private_mem, nullptr) == CL_SUCCESS) {
    r.private_mem_bytes = static_cast<std::int64_t>(private_mem);
  }
  std::size_t wg = 0;
  if (clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg,
                               nullptr) == CL_SUCCESS) {
    r.max_block_threads = static_cast<std::int64_t>(wg);
  }
  return r;
}

/// Builds `program` and creates `kernel_name` from it; the build log is
/// returned through `log` either way.
Result<KernelHandle> build_and_create(cl_program program, cl_device_id device,
                                      const std::string& kernel_name, const std::string& options,
                                      std::string& log) {
  cl_int err = clBuildProgram(program, 1, &device, options.c_str(), nullptr, nullptr);
  log = build_log(program, device);
  if (err != CL_SUCCESS) {
    std::string line = first_error_line(log);
    if (line.empty()) line = cl_error_text(err);
    return Error{ErrorCode::kCompile, "build failed for " + kernel_name + ": " + line,
                 log.empty() ? "clBuildProgram returned " + cl_error_text(err) +
                                   "; options: " + options
                             : log};
  }
  KernelHandle kernel(clCreateKernel(program, kernel_name.c_str(), &err));
  if (err != CL_SUCCESS) {
    return Error{ErrorCode::kCompile,
                 "build failed for " + kernel_name + ": clCreateKernel returned " +
                     cl_error_text(err) + " (no kernel of that name in the source?)",
                 log};
  }
  return kernel;
}

/// A program built from source by OpenClCompiler, kept for load() on the
/// same context; released with the last CompiledKernel copy that holds it.
struct BuiltProgram {
  BuiltProgram(cl_program p, cl_context c) : program(p), context(c) {}
  ~BuiltProgram() { clReleaseProgram(program); }
  BuiltProgram(const BuiltProgram&) = delete;
  BuiltProgram& operator=(const BuiltProgram&) = delete;
  cl_program program;
  cl_context context;
};

/// The program's binary (CL_PROGRAM_BINARIES); on PoCL this generates machine code.
Result<std::vector<std::uint8_t>> program_binary(cl_program program) {
  std::size_t size = 0;
  cl_int err = clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr);
  if (err != CL_SUCCESS) return cl_error(ErrorCode::kCompile, "CL_PROGRAM_BINARY_SIZES", err);
  std::vector<std::uint8_t> binary(size);
  unsigned char* ptr = binary.data();
  err = clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr);
  if (err != CL_SUCCESS) return cl_error(ErrorCode::kCompile, "CL_PROGRAM_BINARIES", err);
  return binary;
}

/// A program of `source`, not built yet.
Result<ProgramHandle> program_of_source(cl_context context, const std::string& source) {
  const char* text = source.c_str();
  const std::size_t length = source.size();
  cl_int err = CL_SUCCESS;
  ProgramHandle program(clCreateProgramWithSource(context, 1, &text, &length, &err));
  if (err != CL_SUCCESS) return cl_error(ErrorCode::kCompile, "clCreateProgramWithSource", err);
  return program;
}

/// The binary of `source` built alone (its kernel `kernel_name` checked).
Result<std::vector<std::uint8_t>> program_binary_of(cl_context context, cl_device_id device,
                                                   const std::string& source, const std::string& kernel_name,
                                                   const std::string& options) {
  KF_TRY_ASSIGN(program, program_of_source(context, source));
  std::string log;
  KF_TRY(build_and_create(program.get(), device, kernel_name, options, log));
  return program_binary(program.get());
}

class OpenClCompiler final : public Compiler {
 public:
  OpenClCompiler(cl_context context, cl_device_id device, std::string name, std::string version)
      : context_(context), device_(device), name_(std::move(name)), version_(std::move(version)) {}

  std::string name() const override { return name_; }
  std::string version() const override { return version_; }

  Result<CompiledKernel> compile(const std::string& source, const std::string& kernel_name,
                                 const std::string& options) override {
    const auto start = std::chrono::steady_clock::now();
    CompiledKernel out;
    out.kernel_name = kernel_name;
    out.options = full_options(options);

    KF_TRY_ASSIGN(program, program_of_source(context_, source));
    KF_TRY_ASSIGN(kernel, build_and_create(program.get(), device_, kernel_name, out.options,
                                           out.log));
    out.resources = kernel_resources(kernel.get(), device_);
    // The binary is fetched only when asked for (binary cache, runtime):
    // PoCL generates machine code to hand one out, which costs more than the
    // build. Meanwhile this device's load() uses the built program.
    auto built = std::make_shared<BuiltProgram>(program.release(), context_);
    out.fetch_binary = [built] { return program_binary(built->program); };
    out.program = built;
    out.compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return out;
  }

  /// Each program pays PoCL's front end (its OpenCL C header) once, however
  /// many kernels it holds; other OpenCL compilers also build per program.
  bool combines_programs() const override { return true; }

  Result<std::vector<CompiledKernel>> compile_combined(const std::string& source,
                                                       const std::vector<const Instance*>& instances,
                                                       const std::string& options) override {
    if (instances.empty()) return Error::bad_input("compile_combined: no instances");
    const auto start = std::chrono::steady_clock::now();
    const std::string full = full_options(options);
    KF_TRY_ASSIGN(program, program_of_source(context_, source));
    std::string log;
    KF_TRY_ASSIGN(first, build_and_create(program.get(), device_, instances[0]->kernel_name, full, log));
    auto built = std::make_shared<BuiltProgram>(program.release(), context_);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::vector<CompiledKernel> out;
    for (std::size_t i = 0; i < instances.size(); ++i) {
      const std::string& name = instances[i]->kernel_name;
      KernelHandle kernel = i == 0 ? std::move(first) : KernelHandle{};
      if (i > 0) {
        cl_int err = CL_SUCCESS;
        kernel = KernelHandle(clCreateKernel(built->program, name.c_str(), &err));
        if (err != CL_SUCCESS) {
          return Error{ErrorCode::kCompile,
                       "combined build: clCreateKernel of " + name + " returned " + cl_error_text(err), log};
        }
      }
      CompiledKernel k;
      k.kernel_name = name;
      k.options = full;
      k.log = log;
      k.resources = kernel_resources(kernel.get(), device_);
      k.compile_ms = ms / static_cast<double>(instances.size());
      k.program = built;
      // A stored binary is the kernel's own program, built when asked for.
      k.fetch_binary = [context = context_, device = device_, own = instances[i]->source, name, full] {
        return program_binary_of(context, device, own, name, full);
      };
      out.push_back(std::move(k));
    }
    return out;
  }

  /// Every build uses OpenCL C 1.2: the dialect the portable prelude targets.
  static std::string full_options(const std::string& options) {
    if (contains(options, "-cl-std=")) return options;
    return options.empty() ? "-cl-std=CL1.2" : options + " -cl-std=CL1.2";
  }

 private:

  cl_context context_;  // owned by the OpenClDevice, which owns this compiler
  cl_device_id device_;
  std::string name_;
  std::string version_;
};

class OpenClDevice final : public Device {
 public:
  OpenClDevice(DeviceInfo info, cl_device_id device, ContextHandle context, QueueHandle queue)
      : info_(std::move(info)),
        device_(device),
        context_(std::move(context)),
        queue_(std::move(queue)),
        compiler_(context_.get(), device_, info_.compiler, info_.compiler_version) {
    std::size_t sizes[3] = {0, 0, 0};
    clGetDeviceInfo(device_, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof sizes, sizes, nullptr);
    for (int i = 0; i < 3; ++i) max_item_sizes_[i] = static_cast<std::int64_t>(sizes[i]);
    max_alloc_bytes_ = device_value<cl_ulong>(device_, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    // A CPU device's buffers go in host memory of kforge's own, so that its
    // cache flush can evict just them (flush_cache). KFORGE_CPU_CACHE_FLUSH=fill
    // keeps the fill, e.g. to compare the two.
    const char* method = std::getenv("KFORGE_CPU_CACHE_FLUSH");
    evict_buffers_ = info_.device_type == "cpu" && host_cache_eviction_available() &&
                     !(method && std::string_view(method) == "fill");
  }

  const DeviceInfo& info() const override { return info_; }
  Compiler& compiler() override { return compiler_; }

  Result<std::unique_ptr<Kernel>> load(const CompiledKernel& compiled) override;

  Result<std::unique_ptr<Buffer>> allocate(std::size_t bytes) override {
    if (evict_buffers_) return allocate_in_host_memory(bytes);
    cl_int err = CL_SUCCESS;
    // A zero-byte buffer is legal here (an empty tensor); OpenCL is not.
    MemHandle mem(clCreateBuffer(context_.get(), CL_MEM_READ_WRITE, std::max<std::size_t>(bytes, 1),
                                 nullptr, &err));
    if (err != CL_SUCCESS) {
      return cl_error(ErrorCode::kResource, "clCreateBuffer of " + std::to_string(bytes) + " bytes",
                      err);
    }
    return std::unique_ptr<Buffer>(std::make_unique<OpenClBuffer>(std::move(mem), bytes));
  }

  Status write(Buffer& dst, const void* src, std::size_t bytes) override {
    KF_TRY_ASSIGN(buf, checked_buffer(dst, bytes, "write"));
    if (bytes == 0) return ok_status();
    cl_int err = clEnqueueWriteBuffer(queue_.get(), buf->mem(), CL_TRUE, 0, bytes, src, 0, nullptr,
                                      nullptr);
    if (err != CL_SUCCESS) return cl_error(ErrorCode::kLaunch, "clEnqueueWriteBuffer", err);
    return ok_status();
  }

  Status read(const Buffer& src, void* dst, std::size_t bytes) override {
    KF_TRY_ASSIGN(buf, checked_buffer(src, bytes, "read"));
    if (bytes == 0) return ok_status();
    cl_int err = clEnqueueReadBuffer(queue_.get(), buf->mem(), CL_TRUE, 0, bytes, dst, 0, nullptr,
                                     nullptr);
    if (err != CL_SUCCESS) return cl_error(ErrorCode::kLaunch, "clEnqueueReadBuffer", err);
    return ok_status();
  }

  Result<double> launch(Kernel& kernel, const std::vector<KernelArg>& args, const LaunchGeometry& geometry,
                        const OnRunning& on_running = {}) override;

  Status flush_cache() override;
  CacheFlush cache_flush() const override {
    return {evict_buffers_ ? CacheFlushMethod::kEvict : CacheFlushMethod::kFill,
            cache_flush_bytes(info_, static_cast<std::size_t>(max_alloc_bytes_))};
  }

  /// A CPU device runs on the host's cores: their clock (cpu_clock_reader.hpp).
  /// A GPU is found by its PCI address in NVML or ROCm SMI
  /// (pci_clock_reader.hpp); none where the device tells no address or the
  /// vendor's library is missing.
  ClockReader* clock_reader() override {
    if (!clocks_tried_) {
      clocks_tried_ = true;
      if (info_.device_type == "cpu") {
        if (auto r = make_cpu_clock_reader(); r.ok()) clocks_ = std::move(r).value();
      } else if (auto pci = device_pci_address(device_, device_string(device_, CL_DEVICE_EXTENSIONS))) {
        const auto vendor = device_value<cl_uint>(device_, CL_DEVICE_VENDOR_ID);
        if (auto r = open_pci_clock_reader(vendor, *pci, info_.arch); r.ok()) clocks_ = std::move(r).value();
      }
    }
    return clocks_.get();
  }

 private:
  Result<const OpenClBuffer*> checked_buffer(const Buffer& b, std::size_t bytes,
                                             const char* what) const {
    auto* buf = dynamic_cast<const OpenClBuffer*>(&b);
    if (!buf) return Error::bad_input(std::string(what) + ": buffer is not an OpenCL buffer");
    if (bytes > buf->size()) {
      return Error::bad_input(std::string(what) + " of " + std::to_string(bytes) +
                              " bytes exceeds the buffer's " + std::to_string(buf->size()));
    }
    return buf;
  }

  Status check_geometry(const OpenClKernel& kernel, const LaunchGeometry& g) const;
  Result<std::unique_ptr<Buffer>> allocate_in_host_memory(std::size_t bytes);

  DeviceInfo info_;
  cl_device_id device_;
  ContextHandle context_;
  QueueHandle queue_;
  OpenClCompiler compiler_;
  std::int64_t max_item_sizes_[3] = {0, 0, 0};
  cl_ulong max_alloc_bytes_ = 0;
  MemHandle flush_buffer_;
  std::size_t flush_bytes_ = 0;
  /// Buffers in host memory, evicted line by line by flush_cache (CPU
  /// devices that use that memory in place); else the fill.
  bool evict_buffers_ = false;
  std::shared_ptr<HostBufferRanges> host_ranges_ = std::make_shared<HostBufferRanges>();
  cl_uint flush_pattern_ = 0;
  std::unique_ptr<ClockReader> clocks_;
  bool clocks_tried_ = false;
};

/// Rebuilds the program from the binary compile() returned (PoCL and GPU
/// drivers accept their own binaries) and creates the kernel.
Result<std::unique_ptr<Kernel>> OpenClDevice::load(const CompiledKernel& compiled) {
  const std::string& name = compiled.kernel_name;
  // Built by this device's compiler in this process: use the program as is.
  if (auto built = std::static_pointer_cast<BuiltProgram>(compiled.program);
      built && built->context == context_.get()) {
    cl_int err = CL_SUCCESS;
    KernelHandle kernel(clCreateKernel(built->program, name.c_str(), &err));
    if (err != CL_SUCCESS) return cl_error(ErrorCode::kCompile, "load of " + name + ": clCreateKernel", err);
    clRetainProgram(built->program);
    ResourceReport res = kernel_resources(kernel.get(), device_);
    return std::unique_ptr<Kernel>(
        std::make_unique<OpenClKernel>(name, ProgramHandle(built->program), std::move(kernel), res));
  }
  if (compiled.binary.empty() && compiled.fetch_binary) {
    CompiledKernel with_binary = compiled;
    KF_TRY(with_binary.ensure_binary());
    return load(with_binary);
  }
  if (compiled.binary.empty()) {
    return Error{ErrorCode::kBadInput, "load of " + name + ": empty binary", {}};
  }
  const unsigned char* data = compiled.binary.data();
  const std::size_t size = compiled.binary.size();
  cl_int binary_status = CL_SUCCESS;
  cl_int err = CL_SUCCESS;
  ProgramHandle program(clCreateProgramWithBinary(context_.get(), 1, &device_, &size, &data,
                                                  &binary_status, &err));
  if (err != CL_SUCCESS || binary_status != CL_SUCCESS) {
    return cl_error(ErrorCode::kCompile, "load of " + name + ": clCreateProgramWithBinary",
                    err != CL_SUCCESS ? err : binary_status);
  }
  std::string log;
  KF_TRY_ASSIGN(kernel, build_and_create(program.get(), device_, name,
                                         OpenClCompiler::full_options(compiled.options), log));
  ResourceReport res = kernel_resources(kernel.get(), device_);
  return std::unique_ptr<Kernel>(
      std::make_unique<OpenClKernel>(name, std::move(program), std::move(kernel), res));
}

std::string geometry_text(const LaunchGeometry& g) {
  auto dims = [](const std::array<std::int64_t, 3>& a) {
    return std::to_string(a[0]) + "x" + std::to_string(a[1]) + "x" + std::to_string(a[2]);
  };
  return "block " + dims(g.block) + ", grid " + dims(g.grid);
}

Status OpenClDevice::check_geometry(const OpenClKernel& kernel, const LaunchGeometry& g) const {
  const std::string where = "launch of " + kernel.name() + " (" + geometry_text(g) + ")";
  std::int64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    if (g.block[i] < 1 || g.grid[i] < 1) {
      return Error::bad_input(where + ": every block and grid dimension must be positive");
    }
    if (max_item_sizes_[i] > 0 && g.block[i] > max_item_sizes_[i]) {
      return Error{ErrorCode::kResource,
                   where + ": block dimension " + std::to_string(i) + " exceeds the device's " +
                       std::to_string(max_item_sizes_[i]) + " (CL_INVALID_WORK_ITEM_SIZE)",
                   {}};
    }
    threads *= g.block[i];
  }
  const ResourceReport res = kernel.resources();
  if (res.max_block_threads > 0 && threads > res.max_block_threads) {
    return Error{ErrorCode::kResource,
                 where + ": " + std::to_string(threads) +
                     " threads per block exceed the kernel's " +
                     std::to_string(res.max_block_threads) + " (CL_INVALID_WORK_GROUP_SIZE)",
                 {}};
  }
  if (res.local_mem_bytes > info_.local_mem_bytes && info_.local_mem_bytes > 0) {
    return Error{ErrorCode::kResource,
                 where + ": " + std::to_string(res.local_mem_bytes) +
                     " bytes of local memory exceed the device's " +
                     std::to_string(info_.local_mem_bytes) + " (CL_OUT_OF_RESOURCES)",
                 {}};
  }
  return ok_status();
}

/// Set by event callbacks (on one of the runtime's threads) once a command
/// runs or ends; launch() waits on it.
struct RunningState {
  std::mutex mutex;
  std::condition_variable changed;
  bool done = false;
  void reached() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      done = true;
    }
    changed.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [this] { return done; });
  }
  static void CL_CALLBACK notify(cl_event, cl_int, void* data) {
    auto* held = static_cast<std::shared_ptr<RunningState>*>(data);
    (*held)->reached();
    delete held;
  }
};

Result<double> OpenClDevice::launch(Kernel& kernel, const std::vector<KernelArg>& args,
                                    const LaunchGeometry& geometry, const OnRunning& on_running) {
  auto* k = dynamic_cast<OpenClKernel*>(&kernel);
  if (!k) return Error::bad_input("launch: kernel was not loaded by the OpenCL backend");
  KF_TRY(check_geometry(*k, geometry));
  const std::string where = "launch of " + k->name();

  for (std::size_t i = 0; i < args.size(); ++i) {
    const KernelArg& a = args[i];
    const auto index = static_cast<cl_uint>(i);
    cl_int err = CL_SUCCESS;
    switch (a.kind) {
      case KernelArg::Kind::kBuffer: {
        auto* buf = a.buffer ? dynamic_cast<OpenClBuffer*>(a.buffer) : nullptr;
        if (!buf) {
          return Error::bad_input(where + ": argument " + std::to_string(i) +
                                  " is not an OpenCL buffer");
        }
        cl_mem mem = buf->mem();
        err = clSetKernelArg(k->handle(), index, sizeof mem, &mem);
        break;
      }
      case KernelArg::Kind::kInt32: {
        cl_int v = a.i32;
        err = clSetKernelArg(k->handle(), index, sizeof v, &v);
        break;
      }
      case KernelArg::Kind::kFloat32: {
        cl_float v = a.f32;
        err = clSetKernelArg(k->handle(), index, sizeof v, &v);
        break;
      }
    }
    if (err != CL_SUCCESS) {
      return cl_error(ErrorCode::kLaunch, where + ": clSetKernelArg(" + std::to_string(i) + ")",
                      err);
    }
  }

  std::size_t global[3];
  std::size_t local[3];
  for (int i = 0; i < 3; ++i) {
    local[i] = static_cast<std::size_t>(geometry.block[i]);
    global[i] = static_cast<std::size_t>(geometry.grid[i] * geometry.block[i]);
  }
  cl_event raw_event = nullptr;
  cl_int err = clEnqueueNDRangeKernel(queue_.get(), k->handle(), 3, nullptr, global, local, 0,
                                      nullptr, &raw_event);
  EventHandle event(raw_event);
  if (err != CL_SUCCESS) {
    const bool resource = err == CL_INVALID_WORK_GROUP_SIZE || err == CL_INVALID_WORK_ITEM_SIZE ||
                          err == CL_OUT_OF_RESOURCES || err == CL_MEM_OBJECT_ALLOCATION_FAILURE;
    Error e = cl_error(resource ? ErrorCode::kResource : ErrorCode::kLaunch,
                       where + ": clEnqueueNDRangeKernel", err);
    e.context = geometry_text(geometry);
    return e;
  }
  if (on_running) {
    // Waits, without spinning, until the command runs (or ends, or fails),
    // then tells the caller on this thread.
    auto state = std::make_shared<RunningState>();
    for (cl_int when : {CL_RUNNING, CL_COMPLETE}) {
      auto* held = new std::shared_ptr<RunningState>(state);  // released by the callback
      if (clSetEventCallback(raw_event, when, &RunningState::notify, held) != CL_SUCCESS) {
        delete held;
        state->reached();  // no callback: say so now rather than never
      }
    }
    state->wait();
    on_running();
  }
  err = clWaitForEvents(1, &raw_event);
  cl_int status = CL_COMPLETE;
  clGetEventInfo(raw_event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
  if (err != CL_SUCCESS || status < 0) {
    Error e = cl_error(ErrorCode::kLaunch, where + ": kernel execution failed",
                       status < 0 ? status : err);
    e.context = geometry_text(geometry);
    return e;
  }
  cl_ulong start = 0;
  cl_ulong end = 0;
  err = clGetEventProfilingInfo(raw_event, CL_PROFILING_COMMAND_START, sizeof start, &start,
                                nullptr);
  if (err == CL_SUCCESS) {
    err = clGetEventProfilingInfo(raw_event, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
  }
  if (err != CL_SUCCESS) return cl_error(ErrorCode::kLaunch, where + ": profiling info", err);
  return end > start ? static_cast<double>(end - start) * 1e-6 : 0.0;
}

Result<std::unique_ptr<Buffer>> OpenClDevice::allocate_in_host_memory(std::size_t bytes) {
  constexpr std::size_t kPage = 4096;
  const std::size_t cl_bytes = std::max<std::size_t>(bytes, 1);  // a zero-byte buffer is legal here, not in OpenCL
  void* host = std::aligned_alloc(kPage, (cl_bytes + kPage - 1) / kPage * kPage);
  if (!host) return Error{ErrorCode::kResource, "host memory of " + std::to_string(bytes) + " bytes for a buffer", {}};
  std::memset(host, 0, std::min<std::size_t>(cl_bytes, 16));
  cl_int err = CL_SUCCESS;
  MemHandle mem(clCreateBuffer(context_.get(), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, cl_bytes, host, &err));
  if (err != CL_SUCCESS) {
    std::free(host);
    return cl_error(ErrorCode::kResource, "clCreateBuffer of " + std::to_string(bytes) + " bytes in host memory",
                    err);
  }
  // The memory is freed once OpenCL is done with the buffer, not before.
  err = clSetMemObjectDestructorCallback(mem.get(), [](cl_mem, void* p) { std::free(p); }, host);
  if (err != CL_SUCCESS) {
    mem.reset();
    std::free(host);  // no command used it
    return cl_error(ErrorCode::kResource, "clSetMemObjectDestructorCallback", err);
  }
  // The device may keep a copy of its own (OpenCL allows it); then evicting
  // this memory would leave the kernel's data cached. A fill must show up in
  // it, else this device flushes by filling from now on.
  const cl_uchar mark = 0xa5;
  const std::size_t probe = std::min<std::size_t>(cl_bytes, 16);
  err = clEnqueueFillBuffer(queue_.get(), mem.get(), &mark, 1, 0, probe, 0, nullptr, nullptr);
  if (err == CL_SUCCESS) err = clFinish(queue_.get());
  if (err != CL_SUCCESS) return cl_error(ErrorCode::kResource, "clEnqueueFillBuffer of a new buffer", err);
  const auto* seen = static_cast<const cl_uchar*>(host);
  const bool in_place = std::all_of(seen, seen + probe, [&](cl_uchar c) { return c == mark; });
  if (!in_place) {
    evict_buffers_ = false;
    return std::unique_ptr<Buffer>(std::make_unique<OpenClBuffer>(std::move(mem), bytes));
  }
  return std::unique_ptr<Buffer>(std::make_unique<OpenClBuffer>(std::move(mem), bytes, host, host_ranges_));
}

Status OpenClDevice::flush_cache() {
  // Evicting the buffers leaves nothing of the kernel's data cached, as a
  // fill larger than the caches does, at a cost that grows with the buffers
  // rather than the cache: on a host with a 260 MiB L3 the fill took 66 ms
  // a time. Buffers larger than the fill are cheaper to flush by filling.
  const CacheFlush flush = cache_flush();
  if (flush.method == CacheFlushMethod::kEvict && host_ranges_->bytes() <= flush.bytes) {
    // No command may touch the buffers while they are evicted.
    if (cl_int err = clFinish(queue_.get()); err != CL_SUCCESS) {
      return cl_error(ErrorCode::kLaunch, "flush_cache: clFinish", err);
    }
    host_ranges_->evict_all();
    return ok_status();
  }
  if (!flush_buffer_) {
    const std::size_t bytes = flush.bytes;
    cl_int err = CL_SUCCESS;
    flush_buffer_.reset(clCreateBuffer(context_.get(), CL_MEM_READ_WRITE, bytes, nullptr, &err));
    if (err != CL_SUCCESS) {
      return cl_error(ErrorCode::kResource,
                      "flush_cache: clCreateBuffer of " + std::to_string(bytes) + " bytes", err);
    }
    flush_bytes_ = bytes;
  }
  ++flush_pattern_;  // a new value each time, so no layer can skip the write
  // A 16-byte pattern: PoCL fills pattern by pattern on one thread, and 64 MiB
  // took 5.0 ms with 4 bytes against 1.9 ms with 16 (bench/flush_fill.py).
  const cl_uint pattern[4] = {flush_pattern_, flush_pattern_, flush_pattern_, flush_pattern_};
  cl_event raw_event = nullptr;
  cl_int err = clEnqueueFillBuffer(queue_.get(), flush_buffer_.get(), pattern, sizeof pattern, 0, flush_bytes_, 0,
                                   nullptr, &raw_event);
  EventHandle event(raw_event);
  if (err != CL_SUCCESS) {
    return cl_error(ErrorCode::kLaunch, "flush_cache: clEnqueueFillBuffer", err);
  }
  err = clWaitForEvents(1, &raw_event);
  if (err != CL_SUCCESS) return cl_error(ErrorCode::kLaunch, "flush_cache: clWaitForEvents", err);
  return ok_status();
}

}  // namespace

std::vector<DeviceInfo> list_opencl_devices() {
  std::vector<DeviceInfo> out;
  const auto refs = enumerate_devices();
  for (std::size_t i = 0; i < refs.size(); ++i) out.push_back(describe(refs[i], i));
  return out;
}

Result<std::unique_ptr<Device>> open_opencl_device(std::size_t index) {
  const auto refs = enumerate_devices();
  if (index >= refs.size()) {
    return Error::not_found("no device opencl:" + std::to_string(index) + ": " +
                            std::to_string(refs.size()) + " OpenCL device(s) present");
  }
  const ClDeviceRef& ref = refs[index];
  DeviceInfo info = describe(ref, index);
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                   reinterpret_cast<cl_context_properties>(ref.platform), 0};
  cl_int err = CL_SUCCESS;
  ContextHandle context(clCreateContext(props, 1, &ref.device, nullptr, nullptr, &err));
  if (err != CL_SUCCESS) {
    return cl_error(ErrorCode::kLaunch, "opencl:" + std::to_string(index) + ": clCreateContext",
                    err);
  }
  QueueHandle queue(
      clCreateCommandQueue(context.get(), ref.device, CL_QUEUE_PROFILING_ENABLE, &err));
  if (err != CL_SUCCESS) {
    return cl_error(ErrorCode::kLaunch,
                    "opencl:" + std::to_string(index) + ": clCreateCommandQueue", err);
  }
  return std::unique_ptr<Device>(std::make_unique<OpenClDevice>(
      std::move(info), ref.device, std::move(context), std::move(queue)));
}

}  // namespace kforge
