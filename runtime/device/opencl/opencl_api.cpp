// OpenCL error names, string queries and the backend's small text helpers.
#include "runtime/device/opencl/opencl_api.hpp"

#include <CL/cl_ext.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "runtime/device/opencl/opencl_backend.hpp"

namespace kforge {

const char* cl_error_name(int code) {
  switch (code) {
#define KF_CL_ERROR(name) \
  case name:              \
    return #name;
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
    case -69:
      return "CL_INVALID_PIPE_SIZE";
    case -70:
      return "CL_INVALID_DEVICE_QUEUE";
    case -71:
      return "CL_INVALID_SPEC_ID";
    case -72:
      return "CL_MAX_SIZE_RESTRICTION_EXCEEDED";
    default:
      return "CL_UNKNOWN_ERROR";
  }
}

}  // namespace kforge

namespace kforge::opencl {

std::string cl_error_text(cl_int code) {
  std::string name = cl_error_name(code);
  if (name == "CL_UNKNOWN_ERROR") name += " (" + std::to_string(code) + ")";
  return name;
}

Error cl_error(ErrorCode code, const std::string& what, cl_int err) {
  return Error{code, what + ": " + cl_error_text(err), {}};
}

namespace {

/// A string property through `query` (clGetPlatformInfo, clGetDeviceInfo).
template <typename Handle, typename Info>
std::string info_string(cl_int (*query)(Handle, Info, std::size_t, void*, std::size_t*), Handle h,
                        Info what) {
  std::size_t size = 0;
  if (query(h, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string s(size, '\0');
  if (query(h, what, size, s.data(), nullptr) != CL_SUCCESS) return {};
  s.resize(std::strlen(s.c_str()));
  return s;
}

}  // namespace

std::string platform_string(cl_platform_id p, cl_platform_info what) {
  return info_string(clGetPlatformInfo, p, what);
}

std::string device_string(cl_device_id d, cl_device_info what) {
  return info_string(clGetDeviceInfo, d, what);
}

std::string trim(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

}  // namespace kforge::opencl
