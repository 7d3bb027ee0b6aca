// A thin C++ layer over the OpenCL C API that the OpenCL backend's files
// share: error text, RAII handles, and info queries.
#pragma once

#include <CL/cl.h>

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/result.hpp"

namespace kforge::opencl {

/// The error code's name, with the number where the name is unknown.
std::string cl_error_text(cl_int code);

/// An Error of `code` saying `what` failed with `err`.
Error cl_error(ErrorCode code, const std::string& what, cl_int err);

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

/// A string property; empty when the query fails.
std::string platform_string(cl_platform_id p, cl_platform_info what);
std::string device_string(cl_device_id d, cl_device_info what);

/// A scalar device property; 0 when the query fails (e.g. an absent extension).
template <typename T>
T device_value(cl_device_id d, cl_device_info what) {
  T v{};
  if (clGetDeviceInfo(d, what, sizeof v, &v, nullptr) != CL_SUCCESS) return T{};
  return v;
}

inline bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

/// `s` without leading and trailing white space.
std::string trim(std::string s);

}  // namespace kforge::opencl
