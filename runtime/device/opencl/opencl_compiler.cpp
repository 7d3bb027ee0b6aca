// The OpenCL compiler: clBuildProgram with the first error line of its log,
// binaries fetched only when asked for, combined programs.
#include "runtime/device/opencl/opencl_compiler.hpp"

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "runtime/device/opencl/opencl_backend.hpp"
#include "runtime/device/opencl/opencl_device_info.hpp"

namespace kforge::opencl {

namespace {

std::string build_log(cl_program program, cl_device_id device) {
  std::size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS ||
      size == 0) {
    return {};
  }
  std::string log(size, '\0');
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) != CL_SUCCESS) {
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

}  // namespace

ResourceReport kernel_resources(cl_kernel kernel, cl_device_id device) {
  ResourceReport r;
  cl_ulong local_mem = 0;
  if (clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local_mem, &local_mem,
                               nullptr) == CL_SUCCESS) {
    r.local_mem_bytes = static_cast<std::int64_t>(local_mem);
  }
  cl_ulong private_mem = 0;
  if (clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof private_mem, &private_mem,
                               nullptr) == CL_SUCCESS) {
    r.private_mem_bytes = static_cast<std::int64_t>(private_mem);
  }
  std::size_t wg = 0;
  if (clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, nullptr) ==
      CL_SUCCESS) {
    r.max_block_threads = static_cast<std::int64_t>(wg);
  }
  return r;
}

Result<KernelHandle> build_and_create(cl_program program, cl_device_id device, const std::string& kernel_name,
                                      const std::string& options, std::string& log) {
  cl_int err = clBuildProgram(program, 1, &device, options.c_str(), nullptr, nullptr);
  log = build_log(program, device);
  if (err != CL_SUCCESS) {
    std::string line = first_error_line(log);
    if (line.empty()) line = cl_error_text(err);
    return Error{
        ErrorCode::kCompile, "build failed for " + kernel_name + ": " + line,
        log.empty() ? "clBuildProgram returned " + cl_error_text(err) + "; options: " + options : log};
  }
  KernelHandle kernel(clCreateKernel(program, kernel_name.c_str(), &err));
  if (err != CL_SUCCESS) {
    return Error{ErrorCode::kCompile,
                 "build failed for " + kernel_name + ": clCreateKernel returned " + cl_error_text(err) +
                     " (no kernel of that name in the source?)",
                 log};
  }
  return kernel;
}

Result<CompiledKernel> OpenClCompiler::compile(const std::string& source, const std::string& kernel_name,
                                               const std::string& options) {
  const auto start = std::chrono::steady_clock::now();
  CompiledKernel out;
  out.kernel_name = kernel_name;
  out.format = BinaryFormat::kOpenClBinary;
  out.options = full_options(options);

  KF_TRY_ASSIGN(program, program_of_source(context_, source));
  KF_TRY_ASSIGN(kernel, build_and_create(program.get(), device_, kernel_name, out.options, out.log));
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

Result<std::vector<CompiledKernel>> OpenClCompiler::compile_combined(
    const std::string& source, const std::vector<const Instance*>& instances, const std::string& options) {
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
    k.format = BinaryFormat::kOpenClBinary;
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

CodeGeneration OpenClCompiler::code_generation() const {
  return name_ == kPoclCompiler ? pocl_code_generation() : CodeGeneration{};
}

std::string OpenClCompiler::full_options(const std::string& options) {
  std::string full = options;
  const auto add = [&](const char* flag) {
    if (!contains(full, flag)) full += full.empty() ? flag : std::string(" ") + flag;
  };
  if (!contains(full, "-cl-std=")) add("-cl-std=CL1.2");
  // Parameter type names for the signature check (kernel_signature.hpp); metadata only.
  add("-cl-kernel-arg-info");
  return full;
}

}  // namespace kforge::opencl

namespace kforge {

CodeGeneration pocl_code_generation() {
  const char* cache = std::getenv("POCL_KERNEL_CACHE");
  return {true, !(cache && std::string(cache) == "0")};
}

}  // namespace kforge
