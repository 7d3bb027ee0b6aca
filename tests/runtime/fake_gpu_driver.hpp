// A GPU over host memory behind the CUDA driver's and the HIP runtime's
// entry-point tables, so that the CUDA and HIP devices run on a CPU: it
// allocates, copies and sets memory, loads modules described in text,
// records each launch's arguments and runs one kernel ("fill"), and returns
// an error code where a test injects one.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/device/cuda/cuda_api.hpp"
#include "runtime/device/hip/hip_api.hpp"

namespace kforge::test {

/// The driver operations an error can be injected into; both tables map
/// their calls onto these.
enum class FakeOp {
  kAllocate,
  kCopyIn,
  kCopyOut,
  kMemset,
  kSynchronize,
  kMakeCurrent,
  kLoadModule,
  kSetAttribute,
  kLaunch,
  kEventCreate,
  kEventRecord,
  kEventSynchronize,
  kUnloadModule,
  kReleaseContext,
};

/// An error code the fake returns, by its CUDA and HIP names.
struct FakeError {
  int code;
  const char* cuda_name;
  const char* hip_name;
  const char* text;
};
/// The fake's errors: invalid value (1), out of memory (2), illegal address (700); nullptr for others.
const FakeError* fake_error(int code);

/// One launch as the driver saw it: geometry, dynamic shared bytes, stream,
/// and each parameter's bytes, read by the size the kernel declares.
struct FakeLaunch {
  std::string kernel;
  std::array<unsigned, 3> grid{};
  std::array<unsigned, 3> block{};
  unsigned shared_bytes = 0;
  void* stream = nullptr;
  std::vector<std::vector<std::uint8_t>> params;
  std::array<unsigned, 3> cluster{1, 1, 1};  ///< CTAs per cluster (cuLaunchKernelEx)
};

/// A loaded module. Its image is text: "kernel=<name> args=<p|i|f...>
/// dynamic_shared=<bytes>" (p a device pointer, i an int32, f a float); the
/// dynamic shared bytes, when given, sit in a device global as the prelude's
/// kf_dynamic_shared_bytes does. Or a real cubin or AMDGPU code object (a
/// Triton kernel): its first kernel, parameters by the sizes its table records
/// (8 bytes 'p', 4 'i', others '1', '2').
struct FakeModule {
  std::string kernel;
  std::string args;
  std::uintptr_t dynamic_shared_global = 0;
};

/// The fake GPU's state, one per process, reset by each test.
struct FakeGpu {
  static FakeGpu& get();
  void reset();
  /// The next call of `op` returns `code` instead of succeeding.
  void fail_next(FakeOp op, int code) { failures[op] = code; }
  /// Counts a call of `op`; the code injected for it, consumed, or 0.
  int take_failure(FakeOp op);

  std::map<std::uintptr_t, std::size_t> allocations;  ///< live device memory: address -> bytes
  std::vector<FakeLaunch> launches;
  std::map<FakeOp, int> failures;
  std::map<FakeOp, int> calls;     ///< how often each operation ran
  int static_shared_bytes = 1024;  ///< what the function attributes report
  int max_block_threads = 256;
  int set_dynamic_shared = -1;  ///< the last max dynamic shared bytes a kernel was allowed
  float elapsed_ms = 1.5f;
  int fault = 0;  ///< a kernel's fault, reported by every later wait

  // The operations both tables call.
  int allocate(std::uintptr_t* address, std::size_t bytes);
  int release(std::uintptr_t address);
  int copy_in(std::uintptr_t dst, const void* src, std::size_t bytes);
  int copy_out(void* dst, std::uintptr_t src, std::size_t bytes);
  int memset32(std::uintptr_t dst, unsigned value, std::size_t count);
  int load_module(FakeModule** module, const void* image);
  void unload_module(FakeModule* module);
  int event_synchronize();
  int global(const FakeModule& module, const char* name, std::uintptr_t* address, std::size_t* bytes);
  int launch(const FakeModule& module, const unsigned* grid, const unsigned* block, unsigned shared,
             void* stream, void** params, std::array<unsigned, 3> cluster = {1, 1, 1});
};

/// The CUDA driver's table over the fake GPU (one device, "Fake CUDA GPU", sm_90).
const cuda::DriverApi& fake_cuda_driver();
/// The HIP runtime's table over the fake GPU (one device, "Fake HIP GPU", gfx90a).
const hip::RuntimeApi& fake_hip_runtime();

}  // namespace kforge::test
