// The backend table: every backend found by its name, in enum order, with
// the prelude, architecture spelling, compute-unit word and profiler the
// code asks it for.
#include "generator/backend_traits.hpp"

#include <catch2/catch.hpp>

using namespace kforge;

TEST_CASE("backend traits: each backend is found by its name and its id", "[backend_traits]") {
  REQUIRE(all_backends().size() == 3);
  for (const BackendTraits& b : all_backends()) {
    CHECK(&backend_traits(b.id) == &b);
    CHECK(find_backend(b.name) == &b);
    CHECK(name(b.id) == b.name);
    CHECK(is_backend(b.name, b.id));
    REQUIRE_FALSE(b.prelude_files.empty());
    CHECK(b.prelude_files.back() == "prelude/epilogue.h");
  }
  CHECK(find_backend("vulkan") == nullptr);
  CHECK(find_backend("CUDA") == nullptr);  // names are lower case, as stored
  CHECK_FALSE(is_backend("cuda", BackendId::kHip));
}

TEST_CASE("backend traits: what the GPU backends say of their architectures and profilers",
          "[backend_traits]") {
  const BackendTraits& cuda = backend_traits(BackendId::kCuda);
  CHECK(cuda.arch_prefix == "sm_");
  CHECK(cuda.compute_unit_word == "SM");
  CHECK(cuda.gpu_vendor == "NVIDIA");
  CHECK(cuda.profiler == "ncu");
  CHECK(cuda.prelude_files.front() == "prelude/cuda.h");
  const BackendTraits& hip = backend_traits(BackendId::kHip);
  CHECK(hip.arch_prefix == "gfx");
  CHECK(hip.compute_unit_word == "CU");
  CHECK(hip.profiler == "rocprofiler");
  const BackendTraits& opencl = backend_traits(BackendId::kOpenCL);
  CHECK(opencl.gpu_vendor.empty());  // many vendors: a device's own vendor decides
  CHECK(opencl.profiler.empty());
  CHECK(opencl.prelude_files.size() == 3);  // no gpu.h
}
