#include "generator/backend_traits.hpp"

#include <array>

namespace kforge {

namespace {

constexpr std::array<std::string_view, 3> kOpenclPrelude = {"prelude/opencl.h", "prelude/rows.h",
                                                            "prelude/epilogue.h"};
constexpr std::array<std::string_view, 4> kCudaPrelude = {"prelude/cuda.h", "prelude/gpu.h", "prelude/rows.h",
                                                          "prelude/epilogue.h"};
constexpr std::array<std::string_view, 4> kHipPrelude = {"prelude/hip.h", "prelude/gpu.h", "prelude/rows.h",
                                                         "prelude/epilogue.h"};

constexpr std::array<BackendTraits, 3> kBackends = {{
    {BackendId::kOpenCL, "opencl", "OpenCL", kOpenclPrelude, "", "compute unit", "", ""},
    {BackendId::kCuda, "cuda", "CUDA", kCudaPrelude, "sm_", "SM", "NVIDIA", "ncu"},
    {BackendId::kHip, "hip", "HIP", kHipPrelude, "gfx", "CU", "AMD", "rocprofiler"},
}};

}  // namespace

std::span<const BackendTraits> all_backends() { return kBackends; }

const BackendTraits& backend_traits(BackendId id) { return kBackends[static_cast<std::size_t>(id)]; }

const BackendTraits* find_backend(std::string_view name) {
  for (const BackendTraits& b : kBackends)
    if (b.name == name) return &b;
  return nullptr;
}

std::string_view name(BackendId id) { return backend_traits(id).name; }

bool is_backend(std::string_view backend, BackendId id) { return backend == name(id); }

}  // namespace kforge
