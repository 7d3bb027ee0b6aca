// OpenCL backend: compile, load, buffers, launch and timing, errors, cache flush.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "runtime/device/device_registry.hpp"
#include "runtime/device/host/host_cache_eviction.hpp"
#include "runtime/device/opencl/opencl_backend.hpp"

using namespace kforge;

namespace {

// Each element runs a short dependent loop so the kernel takes measurable time.
constexpr const char* kAxpySource = R"CL(
__kernel void axpy(int n, float a, __global const float* x, __global float* y) {
  __local float scratch[64];
  int i = (int)get_global_id(0);
  scratch[get_local_id(0) % 64] = a;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (i >= n) return;
  float acc = y[i];
  for (int r = 0; r < 16; ++r) acc = acc * 0.5f + scratch[get_local_id(0) % 64] * x[i];
  y[i] = acc;
}
)CL";

float axpy_expected(float a, float x, float y) {
  float acc = y;
  for (int r = 0; r < 16; ++r) acc = acc * 0.5f + a * x;
  return acc;
}

std::unique_ptr<Device> open_first() {
  auto dev = open_device("opencl:0");
  REQUIRE(dev.ok());
  return std::move(dev).value();
}

}  // namespace

TEST_CASE("cl_error_name names OpenCL error codes", "[opencl][backend]") {
  CHECK(std::string(cl_error_name(0)) == "CL_SUCCESS");
  CHECK(std::string(cl_error_name(-54)) == "CL_INVALID_WORK_GROUP_SIZE");
  CHECK(std::string(cl_error_name(-11)) == "CL_BUILD_PROGRAM_FAILURE");
  CHECK(std::string(cl_error_name(-1001)) == "CL_PLATFORM_NOT_FOUND_KHR");
  CHECK(std::string(cl_error_name(12345)) == "CL_UNKNOWN_ERROR");
}

TEST_CASE("a kernel compiles, loads, runs, is timed and computes", "[opencl][backend]") {
  auto dev = open_first();
  CHECK_FALSE(dev->compiler().name().empty());
  CHECK(dev->compiler().version() == dev->info().compiler_version);

  auto compiled = dev->compiler().compile(kAxpySource, "axpy", "");
  REQUIRE(compiled.ok());
  CHECK(compiled->kernel_name == "axpy");
  // The binary is deferred (PoCL generates machine code to hand one out);
  // this device loads the built program.
  CHECK(compiled->binary.empty());
  CHECK(compiled->program);
  REQUIRE(compiled->fetch_binary);
  CHECK(compiled->options.find("-cl-std=CL1.2") != std::string::npos);
  CHECK(compiled->compile_ms > 0.0);
  CHECK(compiled->resources.local_mem_bytes >= 64 * 4);
  CHECK(compiled->resources.max_block_threads > 0);
  CHECK(compiled->resources.to_json().at("registers") == -1);

  auto kernel = dev->load(compiled.value());
  REQUIRE(kernel.ok());
  CHECK(kernel.value()->name() == "axpy");
  CHECK(kernel.value()->resources().max_block_threads > 0);

  // n not a multiple of the block: the guard in the kernel covers the tail.
  const int n = 100'003;
  const float a = 1.5f;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = 0.25f * static_cast<float>(i % 97) - 3.0f;
    y[i] = static_cast<float>(i % 13) + 0.5f;
  }
  auto bx = dev->allocate(n * sizeof(float));
  auto by = dev->allocate(n * sizeof(float));
  REQUIRE(bx.ok());
  REQUIRE(by.ok());
  CHECK(bx.value()->size() == n * sizeof(float));
  REQUIRE(dev->write(*bx.value(), x.data(), n * sizeof(float)).ok());
  REQUIRE(dev->write(*by.value(), y.data(), n * sizeof(float)).ok());

  LaunchGeometry g;
  g.block = {64, 1, 1};
  g.grid = {(n + 63) / 64, 1, 1};
  auto ms = dev->launch(*kernel.value(),
                        {KernelArg::of(std::int32_t{n}), KernelArg::of(a),
                         KernelArg::of(*bx.value()), KernelArg::of(*by.value())},
                        g);
  REQUIRE(ms.ok());
  CHECK(ms.value() > 0.0);
  CHECK(ms.value() < 60'000.0);

  std::vector<float> out(n, std::nanf(""));
  REQUIRE(dev->read(*by.value(), out.data(), n * sizeof(float)).ok());
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    const float want = axpy_expected(a, x[i], y[i]);
    if (!(std::fabs(out[i] - want) <= 1e-5f * (1.0f + std::fabs(want)))) {
      if (bad++ == 0) FAIL_CHECK("index " << i << ": got " << out[i] << ", want " << want);
    }
  }
  CHECK(bad == 0);

  SECTION("reading or writing past a buffer is bad input") {
    auto small = dev->allocate(16);
    REQUIRE(small.ok());
    auto w = dev->write(*small.value(), x.data(), 32);
    REQUIRE_FALSE(w.ok());
    CHECK(w.error().code == ErrorCode::kBadInput);
    auto r = dev->read(*small.value(), out.data(), 32);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::kBadInput);
  }
  SECTION("an over-large work-group is a resource error, not a crash") {
    LaunchGeometry big;
    big.block = {dev->info().max_block_threads * 2, 1, 1};
    auto r = dev->launch(*kernel.value(),
                         {KernelArg::of(std::int32_t{n}), KernelArg::of(a),
                          KernelArg::of(*bx.value()), KernelArg::of(*by.value())},
                         big);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::kResource);
    CHECK_THAT(r.error().message, Catch::Contains("axpy"));
    CHECK_THAT(r.error().message, Catch::Contains("CL_INVALID_WORK_"));
  }
  SECTION("unset arguments fail as a launch error") {
    auto fresh = dev->load(compiled.value());  // arguments stick to a kernel object
    REQUIRE(fresh.ok());
    auto r = dev->launch(*fresh.value(), {KernelArg::of(std::int32_t{n})}, g);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::kLaunch);
    CHECK_THAT(r.error().message, Catch::Contains("CL_INVALID_KERNEL_ARGS"));
  }
  SECTION("a watched launch says once that the kernel runs, on the calling thread, before it returns") {
    int calls = 0;
    const auto caller = std::this_thread::get_id();
    bool on_caller = false;
    auto r = dev->launch(*kernel.value(),
                         {KernelArg::of(std::int32_t{n}), KernelArg::of(a), KernelArg::of(*bx.value()),
                          KernelArg::of(*by.value())},
                         g, [&] {
                           ++calls;
                           on_caller = std::this_thread::get_id() == caller;
                         });
    REQUIRE(r.ok());
    CHECK(r.value() > 0.0);
    CHECK(calls == 1);
    CHECK(on_caller);
    // One that fails to enqueue ends with its error, without waiting for a run that never comes.
    auto fresh = dev->load(compiled.value());
    REQUIRE(fresh.ok());
    calls = 0;
    auto failed = dev->launch(*fresh.value(), {KernelArg::of(std::int32_t{n})}, g, [&] { ++calls; });
    REQUIRE_FALSE(failed.ok());
    CHECK(failed.error().code == ErrorCode::kLaunch);
    CHECK(calls == 0);
  }
  SECTION("a non-positive geometry is bad input") {
    LaunchGeometry zero = g;
    zero.grid[1] = 0;
    auto r = dev->launch(*kernel.value(), {}, zero);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::kBadInput);
  }
}

TEST_CASE("a compile error reports kCompile with the build log", "[opencl][backend]") {
  auto dev = open_first();
  const char* broken = "__kernel void broken(__global float* y) {\n  y[0] = undeclared_name;\n}\n";
  auto compiled = dev->compiler().compile(broken, "broken", "");
  REQUIRE_FALSE(compiled.ok());
  const Error& e = compiled.error();
  CHECK(e.code == ErrorCode::kCompile);
  CHECK_THAT(e.message, Catch::StartsWith("build failed for broken: "));
  CHECK_THAT(e.message, Catch::Contains("undeclared_name"));
  CHECK(e.message.find('\n') == std::string::npos);
  CHECK_THAT(e.context, Catch::Contains("undeclared_name"));

  SECTION("a missing entry point is a compile error too") {
    auto wrong = dev->compiler().compile(kAxpySource, "not_axpy", "");
    REQUIRE_FALSE(wrong.ok());
    CHECK(wrong.error().code == ErrorCode::kCompile);
    CHECK_THAT(wrong.error().message, Catch::Contains("CL_INVALID_KERNEL_NAME"));
  }
  SECTION("defines in the options reach the compiler") {
    const char* guarded =
        "#ifndef KF_OK\n#error KF_OK not defined\n#endif\n"
        "__kernel void guarded(__global float* y) { y[0] = KF_OK; }\n";
    CHECK_FALSE(dev->compiler().compile(guarded, "guarded", "").ok());
    CHECK(dev->compiler().compile(guarded, "guarded", "-DKF_OK=1").ok());
  }
}

TEST_CASE("a binary reloads on a fresh device and a corrupt one is refused", "[opencl][backend]") {
  auto compiled = open_first()->compiler().compile(kAxpySource, "axpy", "");
  REQUIRE(compiled.ok());

  auto dev = open_first();  // another context: only the binary carries over
  auto kernel = dev->load(compiled.value());
  REQUIRE(kernel.ok());
  float x = 2.0f, y = 1.0f;
  auto bx = dev->allocate(sizeof x);
  auto by = dev->allocate(sizeof y);
  REQUIRE(bx.ok());
  REQUIRE(by.ok());
  REQUIRE(dev->write(*bx.value(), &x, sizeof x).ok());
  REQUIRE(dev->write(*by.value(), &y, sizeof y).ok());
  LaunchGeometry g;
  g.block = {1, 1, 1};
  auto ms = dev->launch(*kernel.value(),
                        {KernelArg::of(std::int32_t{1}), KernelArg::of(0.5f),
                         KernelArg::of(*bx.value()), KernelArg::of(*by.value())},
                        g);
  REQUIRE(ms.ok());
  float out = 0.0f;
  REQUIRE(dev->read(*by.value(), &out, sizeof out).ok());
  CHECK(out == Approx(axpy_expected(0.5f, x, y)));

  // From the binary alone, as a later process gets it from the binary cache.
  CompiledKernel from_binary = compiled.value();
  REQUIRE(from_binary.ensure_binary().ok());
  CHECK_FALSE(from_binary.binary.empty());
  from_binary.program.reset();
  from_binary.fetch_binary = nullptr;
  auto reloaded = dev->load(from_binary);
  REQUIRE(reloaded.ok());
  CHECK(reloaded.value()->name() == "axpy");

  CompiledKernel corrupt = from_binary;
  corrupt.binary.assign(64, 0xAB);
  auto refused = dev->load(corrupt);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == ErrorCode::kCompile);
  CHECK_THAT(refused.error().message, Catch::Contains("axpy"));

  corrupt.binary.clear();
  CHECK_FALSE(dev->load(corrupt).ok());
}

TEST_CASE("flush_cache runs repeatedly", "[opencl][backend]") {
  auto dev = open_first();
  REQUIRE(dev->flush_cache().ok());
  REQUIRE(dev->flush_cache().ok());
}

TEST_CASE("a CPU device flushes by evicting its buffers, whose contents survive", "[opencl][backend]") {
  auto dev = open_first();
  if (dev->info().device_type != DeviceType::kCpu || !host_cache_eviction_available()) {
    WARN("not a CPU device on a CPU kforge evicts lines on: the fill is its flush");
    return;
  }
  CHECK(dev->cache_flush().method == CacheFlushMethod::kEvict);
  // 1000 floats: the last cache line is partly the buffer's.
  const int n = 1000;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = 0.25f * static_cast<float>(i % 7);
    y[i] = 1.0f + static_cast<float>(i % 5);
  }
  auto bx = dev->allocate(n * sizeof(float));
  auto by = dev->allocate(n * sizeof(float));
  REQUIRE(bx.ok());
  REQUIRE(by.ok());
  // The device uses the buffers' host memory in place: still evicting.
  CHECK(dev->cache_flush().method == CacheFlushMethod::kEvict);
  REQUIRE(dev->write(**bx, x.data(), n * sizeof(float)).ok());
  REQUIRE(dev->write(**by, y.data(), n * sizeof(float)).ok());
  REQUIRE(dev->flush_cache().ok());
  auto compiled = dev->compiler().compile(kAxpySource, "axpy", "");
  REQUIRE(compiled.ok());
  auto kernel = dev->load(compiled.value());
  REQUIRE(kernel.ok());
  LaunchGeometry g;
  g.block = {64, 1, 1};
  g.grid = {(n + 63) / 64, 1, 1};
  std::vector<KernelArg> args{KernelArg::of(std::int32_t{n}), KernelArg::of(2.0f), KernelArg::of(**bx),
                              KernelArg::of(**by)};
  REQUIRE(dev->launch(**kernel, args, g).ok());
  // The kernel's writes, still dirty in the caches, are written back by the
  // eviction, never lost.
  REQUIRE(dev->flush_cache().ok());
  std::vector<float> out(n);
  REQUIRE(dev->read(**by, out.data(), n * sizeof(float)).ok());
  for (int i = 0; i < n; ++i) REQUIRE(out[i] == Approx(axpy_expected(2.0f, x[i], y[i])));
  // A buffer freed is no longer evicted (its memory may be anyone's by then).
  bx->reset();
  REQUIRE(dev->flush_cache().ok());
}

TEST_CASE("KFORGE_CPU_CACHE_FLUSH=fill keeps the fill on a CPU device", "[opencl][backend]") {
  ::setenv("KFORGE_CPU_CACHE_FLUSH", "fill", 1);
  auto dev = open_first();
  ::unsetenv("KFORGE_CPU_CACHE_FLUSH");
  CHECK(dev->cache_flush().method == CacheFlushMethod::kFill);
  auto b = dev->allocate(4096);
  REQUIRE(b.ok());
  CHECK(dev->cache_flush().method == CacheFlushMethod::kFill);
  REQUIRE(dev->flush_cache().ok());
}

TEST_CASE("evicting host memory keeps its contents, at any alignment", "[opencl][backend]") {
  std::vector<unsigned char> bytes(10000);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 31 + 7);
  const std::vector<unsigned char> before = bytes;
  evict_host_range(bytes.data() + 3, bytes.size() - 5);
  evict_host_range(bytes.data(), 0);
  CHECK(bytes == before);
}
