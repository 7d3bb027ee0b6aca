// The CUDA and HIP devices over a fake driver in host memory
// (fake_gpu_driver.hpp): buffers, argument packing, dynamic shared memory,
// geometry checks, events and timing, the cache flush and error reporting,
// each checked alike for both backends.
#include <catch2/catch.hpp>
#include <cstring>

#include "runtime/device/cuda/cuda_backend.hpp"
#include "runtime/device/foreign_memory.hpp"
#include "runtime/device/hip/hip_backend.hpp"
#include "runtime/device/sticky_error.hpp"
#include "tests/runtime/fake_gpu_driver.hpp"

using namespace kforge;
using test::FakeGpu;
using test::FakeOp;

namespace {

/// What differs between the backends as a test sees it: how to open the
/// fake device, and the driver's names in messages.
struct CudaFake {
  static Result<std::unique_ptr<Device>> open(std::size_t index = 0) {
    return open_cuda_device(test::fake_cuda_driver(), index);
  }
  static Result<std::uintptr_t> address(const Buffer& b) {
    KF_TRY_ASSIGN(a, cuda_buffer_address(b));
    return static_cast<std::uintptr_t>(a);
  }
  static Result<double> timed_call(Device& d, const std::function<Status(void*)>& f) {
    return cuda_timed_call(d, f);
  }
  static constexpr const char* kSelector = "cuda";
  static constexpr const char* kName = "Fake CUDA GPU";
  static constexpr const char* kArch = "sm_90";
  static constexpr const char* kAllocate = "cuMemAlloc";
  static constexpr const char* kCopyIn = "cuMemcpyHtoD";
  static constexpr const char* kLaunch = "cuLaunchKernel";
  static constexpr const char* kMemset = "cuMemsetD32";
  static constexpr const char* kEventCreate = "cuEventCreate";
  static constexpr const char* kInvalidValue = "CUDA_ERROR_INVALID_VALUE (invalid argument)";
  static constexpr const char* kInvalidValueAtLaunch = "CUDA_ERROR_INVALID_VALUE at launch";
  static constexpr const char* kOutOfMemory = "CUDA_ERROR_OUT_OF_MEMORY (out of memory)";
  static constexpr const char* kIllegalAddress =
      "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)";
};

struct HipFake {
  static Result<std::unique_ptr<Device>> open(std::size_t index = 0) {
    return open_hip_device(test::fake_hip_runtime(), index);
  }
  static Result<std::uintptr_t> address(const Buffer& b) {
    KF_TRY_ASSIGN(a, hip_buffer_address(b));
    return reinterpret_cast<std::uintptr_t>(a);
  }
  static Result<double> timed_call(Device& d, const std::function<Status(void*)>& f) {
    return hip_timed_call(d, f);
  }
  static constexpr const char* kSelector = "hip";
  static constexpr const char* kName = "Fake HIP GPU";
  static constexpr const char* kArch = "gfx90a";
  static constexpr const char* kAllocate = "hipMalloc";
  static constexpr const char* kCopyIn = "hipMemcpyHtoD";
  static constexpr const char* kLaunch = "hipModuleLaunchKernel";
  static constexpr const char* kMemset = "hipMemsetD32";
  static constexpr const char* kEventCreate = "hipEventCreate";
  static constexpr const char* kInvalidValue = "hipErrorInvalidValue (invalid argument)";
  static constexpr const char* kInvalidValueAtLaunch = "hipErrorInvalidValue at launch";
  static constexpr const char* kOutOfMemory = "hipErrorOutOfMemory (out of memory)";
  static constexpr const char* kIllegalAddress =
      "hipErrorIllegalAddress (an illegal memory access was encountered)";
};

/// The fake's kernel fill(float* out, int n, float value), with 4096 bytes
/// of dynamic shared memory declared in its module, 1024 static and a
/// launch bound of 256 threads (as the compiler reports them).
CompiledKernel fill_kernel(int dynamic_shared = 4096) {
  CompiledKernel k;
  k.kernel_name = "fill";
  const std::string image =
      "kernel=fill args=pif" + (dynamic_shared ? " dynamic_shared=" + std::to_string(dynamic_shared) : "");
  k.binary.assign(image.begin(), image.end());
  k.binary.push_back(0);
  k.resources.local_mem_bytes = FakeGpu::get().static_shared_bytes;
  k.resources.max_block_threads = FakeGpu::get().max_block_threads;
  return k;
}

LaunchGeometry geometry(std::int64_t block, std::int64_t grid = 1) {
  LaunchGeometry g;
  g.block = {block, 1, 1};
  g.grid = {grid, 1, 1};
  return g;
}

template <class T>
T value_of(const std::vector<std::uint8_t>& bytes) {
  T v{};
  REQUIRE(bytes.size() == sizeof v);
  std::memcpy(&v, bytes.data(), sizeof v);
  return v;
}

/// A device over a freshly reset fake.
template <class Backend>
std::unique_ptr<Device> open_fresh() {
  FakeGpu::get().reset();
  auto d = Backend::open();
  REQUIRE(d.ok());
  return std::move(d).value();
}

}  // namespace

TEMPLATE_TEST_CASE("a GPU device over a fake driver identifies itself and its buffers round-trip",
                   "[cuda][hip][unit]", CudaFake, HipFake) {
  auto device = open_fresh<TestType>();
  CHECK(device->info().backend == TestType::kSelector);
  CHECK(device->info().selector == std::string(TestType::kSelector) + ":0");
  CHECK(device->info().name == TestType::kName);
  CHECK(device->info().arch == TestType::kArch);
  CHECK(device->info().cache_bytes == 1 << 20);
  {
    auto buffer = device->allocate(16);
    REQUIRE(buffer.ok());
    CHECK(FakeGpu::get().allocations.size() == 1);
    const float in[4] = {1.0f, -2.0f, 3.5f, 8.0f};
    float out[4] = {};
    REQUIRE(device->write(**buffer, in, sizeof in).ok());
    REQUIRE(device->read(**buffer, out, sizeof out).ok());
    CHECK(std::memcmp(in, out, sizeof in) == 0);

    auto too_much = device->write(**buffer, in, 32);
    REQUIRE_FALSE(too_much.ok());
    CHECK(too_much.error().code == ErrorCode::kBadInput);
    CHECK(too_much.error().message == "write of 32 bytes into a buffer of 16");
    CHECK(device->read(**buffer, out, 32).error().message == "read of 32 bytes from a buffer of 16");
  }
  CHECK(FakeGpu::get().allocations.empty());
}

TEMPLATE_TEST_CASE("a GPU device reports a driver's refusal with the call and the error's name",
                   "[cuda][hip][unit]", CudaFake, HipFake) {
  auto device = open_fresh<TestType>();
  FakeGpu::get().fail_next(FakeOp::kAllocate, 2);
  auto refused = device->allocate(16);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == ErrorCode::kResource);
  CHECK(refused.error().message ==
        std::string(TestType::kAllocate) + "(16 bytes): " + TestType::kOutOfMemory);

  auto buffer = device->allocate(16);
  REQUIRE(buffer.ok());
  const int word = 7;
  FakeGpu::get().fail_next(FakeOp::kCopyIn, 1);
  auto failed = device->write(**buffer, &word, sizeof word);
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().code == ErrorCode::kLaunch);
  CHECK(failed.error().message == std::string(TestType::kCopyIn) + ": " + TestType::kInvalidValue);
  CHECK(device->write(**buffer, &word, sizeof word).ok());  // not sticky

  auto kernel = device->load(fill_kernel());
  REQUIRE(kernel.ok());
  FakeGpu::get().fail_next(FakeOp::kLaunch, 1);
  auto launch = device->launch(**kernel, {KernelArg::of(**buffer)}, geometry(1));
  REQUIRE_FALSE(launch.ok());
  CHECK(launch.error().code == ErrorCode::kResource);  // an invalid value at launch: too many resources
  CHECK(launch.error().message == std::string(TestType::kLaunch) + "(fill): " + TestType::kInvalidValue);
}

TEMPLATE_TEST_CASE("a GPU device packs arguments in order and passes the dynamic shared memory",
                   "[cuda][hip][unit]", CudaFake, HipFake) {
  auto device = open_fresh<TestType>();
  auto kernel = device->load(fill_kernel());
  REQUIRE(kernel.ok());
  CHECK((*kernel)->name() == "fill");
  CHECK((*kernel)->resources().local_mem_bytes == 1024 + 4096);
  auto buffer = device->allocate(4 * sizeof(float));
  REQUIRE(buffer.ok());
  const float zeros[4] = {};
  REQUIRE(device->write(**buffer, zeros, sizeof zeros).ok());

  bool running = false;
  auto ms =
      device->launch(**kernel, {KernelArg::of(**buffer), KernelArg::of(std::int32_t{3}), KernelArg::of(2.5f)},
                     geometry(64, 2), [&] { running = true; });
  REQUIRE(ms.ok());
  CHECK(*ms == Approx(1.5));
  CHECK(running);
  REQUIRE(FakeGpu::get().launches.size() == 1);
  const auto& l = FakeGpu::get().launches[0];
  CHECK(l.kernel == "fill");
  CHECK(l.block == std::array<unsigned, 3>{64, 1, 1});
  CHECK(l.grid == std::array<unsigned, 3>{2, 1, 1});
  CHECK(l.shared_bytes == 4096);
  REQUIRE(l.params.size() == 3);
  CHECK(value_of<std::uintptr_t>(l.params[0]) == *TestType::address(**buffer));
  CHECK(value_of<std::int32_t>(l.params[1]) == 3);
  CHECK(value_of<float>(l.params[2]) == 2.5f);

  float out[4] = {};
  REQUIRE(device->read(**buffer, out, sizeof out).ok());
  CHECK(std::vector<float>(out, out + 4) == std::vector<float>{2.5f, 2.5f, 2.5f, 0.0f});

  // The library hook runs on the stream the launch used, timed the same way.
  void* seen = nullptr;
  auto call = TestType::timed_call(*device, [&](void* stream) {
    seen = stream;
    return ok_status();
  });
  REQUIRE(call.ok());
  CHECK(*call == Approx(1.5));
  CHECK(seen == l.stream);
  CHECK(seen != nullptr);
}

TEMPLATE_TEST_CASE("a GPU device refuses a geometry over the kernel's limit before the driver",
                   "[cuda][hip][unit]", CudaFake, HipFake) {
  auto device = open_fresh<TestType>();
  auto kernel = device->load(fill_kernel(0));
  REQUIRE(kernel.ok());
  CHECK((*kernel)->resources().max_block_threads == 256);
  auto over = device->launch(**kernel, {}, geometry(512));
  REQUIRE_FALSE(over.ok());
  CHECK(over.error().code == ErrorCode::kResource);
  CHECK(over.error().message ==
        std::string(
            "launch of fill (block 512x1x1, grid 1x1x1): 512 threads per block exceed the kernel's limit "
            "of 256 (") +
            TestType::kInvalidValueAtLaunch + ")");
  auto empty = device->launch(**kernel, {}, geometry(0));
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().code == ErrorCode::kBadInput);
  CHECK(empty.error().message ==
        "launch of fill (block 0x1x1, grid 1x1x1): every block and grid dimension must be positive");
  CHECK(FakeGpu::get().launches.empty());
}

TEMPLATE_TEST_CASE("a fault while a kernel runs is sticky: later calls return it without the driver",
                   "[cuda][hip][unit]", CudaFake, HipFake) {
  auto device = open_fresh<TestType>();
  auto kernel = device->load(fill_kernel());
  auto buffer = device->allocate(16);
  REQUIRE((kernel.ok() && buffer.ok()));
  // 100 floats into a 16-byte buffer: the fake faults as a GPU would.
  auto run = device->launch(**kernel,
                            {KernelArg::of(**buffer), KernelArg::of(std::int32_t{100}), KernelArg::of(1.0f)},
                            geometry(1));
  REQUIRE_FALSE(run.ok());
  CHECK(run.error().code == ErrorCode::kLaunch);
  CHECK(run.error().message == std::string("fill failed while running: ") + TestType::kIllegalAddress);
  CHECK(is_sticky_device_error(run.error()));

  const int allocations = FakeGpu::get().calls[FakeOp::kAllocate];
  auto later = device->allocate(16);
  REQUIRE_FALSE(later.ok());
  CHECK(later.error().message == run.error().message);
  CHECK(FakeGpu::get().calls[FakeOp::kAllocate] == allocations);
}

TEMPLATE_TEST_CASE("a GPU device's events: a failed creation names the call and the error",
                   "[cuda][hip][unit]", CudaFake, HipFake) {
  auto device = open_fresh<TestType>();
  auto kernel = device->load(fill_kernel(0));
  auto buffer = device->allocate(16);
  REQUIRE((kernel.ok() && buffer.ok()));
  const std::vector<KernelArg> args{KernelArg::of(**buffer), KernelArg::of(std::int32_t{1}),
                                    KernelArg::of(1.0f)};
  FakeGpu::get().fail_next(FakeOp::kEventCreate, 2);
  auto launch = device->launch(**kernel, args, geometry(1));
  REQUIRE_FALSE(launch.ok());
  CHECK(launch.error().code == ErrorCode::kResource);
  CHECK(launch.error().message == std::string(TestType::kEventCreate) + ": " + TestType::kOutOfMemory);
  CHECK(device->launch(**kernel, args, geometry(1)).ok());
  device.reset();
  CHECK(FakeGpu::get().calls[FakeOp::kEventCreate] == 3);
}

TEMPLATE_TEST_CASE("a GPU device's cache flush writes a new pattern over its flush buffer each time",
                   "[cuda][hip][unit]", CudaFake, HipFake) {
  auto device = open_fresh<TestType>();
  const std::size_t bytes = device->cache_flush().bytes;
  CHECK(bytes >= std::size_t{32} << 20);
  REQUIRE(device->flush_cache().ok());
  REQUIRE(FakeGpu::get().allocations.size() == 1);
  const auto [address, size] = *FakeGpu::get().allocations.begin();
  CHECK(size == bytes);
  const auto* words = reinterpret_cast<const std::uint32_t*>(address);
  const std::uint32_t first = words[0];
  CHECK(words[size / 4 - 1] == first);
  REQUIRE(device->flush_cache().ok());
  CHECK(words[0] != first);
  CHECK(FakeGpu::get().allocations.size() == 1);

  FakeGpu::get().fail_next(FakeOp::kMemset, 1);
  auto failed = device->flush_cache();
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().message ==
        std::string("cache flush (") + TestType::kMemset + "): " + TestType::kInvalidValue);
  device.reset();
  CHECK(FakeGpu::get().allocations.empty());
}

TEMPLATE_TEST_CASE("a GPU device launches in place on memory and a stream the caller owns",
                   "[cuda][hip][unit]", CudaFake, HipFake) {
  auto device = open_fresh<TestType>();
  ForeignMemory* foreign = foreign_memory(*device);
  REQUIRE(foreign != nullptr);
  auto kernel = device->load(fill_kernel());
  REQUIRE(kernel.ok());
  // The caller's memory: allocated behind the device's back, as PyTorch's allocator does.
  std::uintptr_t theirs = 0;
  REQUIRE(FakeGpu::get().allocate(&theirs, 4 * sizeof(float)) == 0);
  const int allocations_before = FakeGpu::get().calls[FakeOp::kAllocate];
  {
    auto borrowed = foreign->borrow(theirs, 4 * sizeof(float), 0);
    REQUIRE(borrowed.ok());
    CHECK(*TestType::address(**borrowed) == theirs);
    auto* their_stream = reinterpret_cast<void*>(std::uintptr_t{0x5eed});
    {
      CallerStream on_theirs(foreign, reinterpret_cast<std::uintptr_t>(their_stream));
      auto ms = device->launch(
          **kernel, {KernelArg::of(**borrowed), KernelArg::of(std::int32_t{2}), KernelArg::of(7.0f)},
          geometry(64));
      REQUIRE(ms.ok());
    }
    REQUIRE(FakeGpu::get().launches.size() == 1);
    CHECK(FakeGpu::get().launches[0].stream == their_stream);
    CHECK(value_of<std::uintptr_t>(FakeGpu::get().launches[0].params[0]) == theirs);
    // The kernel wrote the caller's memory itself: nothing was copied or allocated.
    const float* out = reinterpret_cast<const float*>(theirs);
    CHECK(std::vector<float>(out, out + 4) == std::vector<float>{7.0f, 7.0f, 0.0f, 0.0f});
    CHECK(FakeGpu::get().calls[FakeOp::kCopyIn] == 0);
    CHECK(FakeGpu::get().calls[FakeOp::kAllocate] == allocations_before);

    // Out of the scope, launches are on the device's own stream again.
    REQUIRE(device
                ->launch(**kernel,
                         {KernelArg::of(**borrowed), KernelArg::of(std::int32_t{1}), KernelArg::of(1.0f)},
                         geometry(64))
                .ok());
    CHECK(FakeGpu::get().launches[1].stream != their_stream);
    CHECK(FakeGpu::get().launches[1].stream != nullptr);
    REQUIRE(device->synchronize().ok());
  }
  // Dropping the borrowed buffer left the caller's memory alone.
  CHECK(FakeGpu::get().allocations.count(theirs) == 1);

  auto other_device = foreign->borrow(theirs, 16, 1);
  REQUIRE_FALSE(other_device.ok());
  CHECK(other_device.error().code == ErrorCode::kBadInput);
  CHECK(other_device.error().message ==
        std::string("memory of ") + (std::string(TestType::kSelector) == "cuda" ? "CUDA" : "HIP") +
            " device 1 passed to " + TestType::kSelector + ":0 (" + TestType::kName + ")");
  CHECK(foreign->borrow(0, 16, 0).error().code == ErrorCode::kBadInput);
  CHECK(foreign->borrow(theirs, 0, 0).error().code == ErrorCode::kBadInput);
  REQUIRE(FakeGpu::get().release(theirs) == 0);
}

TEMPLATE_TEST_CASE("an enqueued kernel is neither timed nor waited for, and a read waits for it",
                   "[cuda][hip][unit]", CudaFake, HipFake) {
  auto device = open_fresh<TestType>();
  auto kernel = device->load(fill_kernel());
  auto buffer = device->allocate(4 * sizeof(float));
  REQUIRE((kernel.ok() && buffer.ok()));
  const auto fill = [&](std::int32_t n, float v) {
    return std::vector<KernelArg>{KernelArg::of(**buffer), KernelArg::of(n), KernelArg::of(v)};
  };
  auto& gpu = FakeGpu::get();
  for (int i = 0; i < 3; ++i) REQUIRE(device->enqueue(**kernel, fill(4, 1.0f + i), geometry(64)).ok());
  CHECK(gpu.launches.size() == 3);
  CHECK(gpu.calls[FakeOp::kEventRecord] == 0);
  CHECK(gpu.calls[FakeOp::kEventSynchronize] == 0);
  CHECK(gpu.calls[FakeOp::kSynchronize] == 0);

  // The driver's copy runs on the legacy stream: the device waits first, once.
  std::vector<float> out(4);
  REQUIRE(device->read(**buffer, out.data(), 16).ok());
  CHECK(out == std::vector<float>{3.0f, 3.0f, 3.0f, 3.0f});
  CHECK(gpu.calls[FakeOp::kSynchronize] == 1);
  REQUIRE(device->read(**buffer, out.data(), 16).ok());
  CHECK(gpu.calls[FakeOp::kSynchronize] == 1);

  // A geometry over the kernel's limit is refused before anything is enqueued.
  CHECK(device->enqueue(**kernel, fill(4, 9.0f), geometry(512)).error().code == ErrorCode::kResource);
  CHECK(gpu.launches.size() == 3);

  // A kernel that faults while it runs is reported by the wait, and stays.
  REQUIRE(device->enqueue(**kernel, fill(100, 1.0f), geometry(1)).ok());
  auto waited = device->synchronize();
  REQUIRE_FALSE(waited.ok());
  CHECK(waited.error().message == std::string("waiting for the device: ") + TestType::kIllegalAddress);
  CHECK(device->enqueue(**kernel, fill(4, 1.0f), geometry(64)).error().message == waited.error().message);
}

TEMPLATE_TEST_CASE("opening a GPU device past the count says how many there are", "[cuda][hip][unit]",
                   CudaFake, HipFake) {
  FakeGpu::get().reset();
  auto missing = TestType::open(3);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == ErrorCode::kNotFound);
  CHECK(missing.error().message == std::string("no device '") + TestType::kSelector + ":3': 1 " +
                                       (std::string(TestType::kSelector) == "cuda" ? "CUDA" : "HIP") +
                                       " device(s) present");
}

TEST_CASE("the library hooks refuse another backend's device", "[cuda][hip][unit]") {
  FakeGpu::get().reset();
  auto cuda = CudaFake::open();
  auto hip = HipFake::open();
  REQUIRE((cuda.ok() && hip.ok()));
  auto none = [](void*) { return ok_status(); };
  CHECK(hip_timed_call(**cuda, none).error().message == "Fake CUDA GPU is not a HIP device");
  CHECK(cuda_timed_call(**hip, none).error().message == "Fake HIP GPU is not a CUDA device");
  CHECK(cuda_make_current(**hip).error().code == ErrorCode::kBadInput);
  CHECK(hip_make_current(**cuda).error().code == ErrorCode::kBadInput);
}

TEST_CASE("a CUDA kernel opts in to its dynamic shared memory, and a refusal is a resource error",
          "[cuda][unit]") {
  auto device = open_fresh<CudaFake>();
  REQUIRE(device->load(fill_kernel()).ok());
  CHECK(FakeGpu::get().set_dynamic_shared == 4096);
  FakeGpu::get().fail_next(FakeOp::kSetAttribute, 1);
  auto refused = device->load(fill_kernel());
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == ErrorCode::kResource);
  CHECK(refused.error().message ==
        "fill needs 4096 bytes of dynamic shared memory: CUDA_ERROR_INVALID_VALUE (invalid argument)");
  CHECK(FakeGpu::get().calls[FakeOp::kUnloadModule] == 2);  // the first kernel, then the refused one
  device.reset();
  CHECK(FakeGpu::get().calls[FakeOp::kReleaseContext] == 1);
}
