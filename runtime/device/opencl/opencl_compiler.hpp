// The OpenCL compiler: OpenCL C source built into a program for one device,
// one kernel or several in one program (PoCL's front end paid once).
#pragma once

#include <CL/cl.h>

#include <string>
#include <vector>

#include "runtime/device/backend.hpp"
#include "runtime/device/opencl/opencl_api.hpp"

namespace kforge::opencl {

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

/// Resources of a built kernel as the runtime reports them.
ResourceReport kernel_resources(cl_kernel kernel, cl_device_id device);

/// Builds `program` and creates `kernel_name` from it; the build log is
/// returned through `log` either way.
Result<KernelHandle> build_and_create(cl_program program, cl_device_id device, const std::string& kernel_name,
                                      const std::string& options, std::string& log);

class OpenClCompiler final : public Compiler {
 public:
  OpenClCompiler(cl_context context, cl_device_id device, std::string name, std::string version)
      : context_(context), device_(device), name_(std::move(name)), version_(std::move(version)) {}

  std::string name() const override { return name_; }
  std::string version() const override { return version_; }
  Result<CompiledKernel> compile(const std::string& source, const std::string& kernel_name,
                                 const std::string& options) override;
  /// Each program pays PoCL's front end (its OpenCL C header) once, however
  /// many kernels it holds; other OpenCL compilers also build per program.
  bool combines_programs() const override { return true; }
  /// PoCL's, where this is PoCL; other drivers generate code at build time.
  CodeGeneration code_generation() const override;
  Result<std::vector<CompiledKernel>> compile_combined(const std::string& source,
                                                       const std::vector<const Instance*>& instances,
                                                       const std::string& options) override;

  /// Every build uses OpenCL C 1.2 (the dialect the portable prelude targets)
  /// and keeps the kernels' parameter type names (-cl-kernel-arg-info).
  static std::string full_options(const std::string& options);

 private:
  cl_context context_;  // owned by the OpenClDevice, which owns this compiler
  cl_device_id device_;
  std::string name_;
  std::string version_;
};

}  // namespace kforge::opencl
