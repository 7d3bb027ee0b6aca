// Triton binaries (tests/data/triton, made by make_binaries.py) read with
// their launch records and launched by the CUDA and HIP devices over the
// fake driver: the parameter tables in the binaries, the ABI checks before
// anything is enqueued, scratch, dynamic shared memory and clusters.
#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <iterator>

#include "runtime/binaries/code_object_reader.hpp"
#include "runtime/binaries/cubin_attributes.hpp"
#include "runtime/binaries/elf_image.hpp"
#include "runtime/device/cuda/cuda_backend.hpp"
#include "runtime/device/foreign_memory.hpp"
#include "runtime/device/hip/hip_backend.hpp"
#include "runtime/kinds/triton_binary.hpp"
#include "tests/runtime/fake_gpu_driver.hpp"

using namespace kforge;
using test::FakeGpu;

namespace {

const std::filesystem::path kData = std::filesystem::path(KFORGE_TEST_DATA_DIR) / "triton";

nlohmann::json record_of(const std::string& folder) {
  std::ifstream in(kData / folder / "scale.json");
  return nlohmann::json::parse(in);
}

std::vector<std::uint8_t> bytes_of(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

CompiledKernel kernel_of(const std::string& folder, const nlohmann::json& record) {
  auto k = triton_compiled_kernel(record, bytes_of(kData / folder / record["binary"].get<std::string>()));
  REQUIRE(k.ok());
  return std::move(k).value();
}

std::vector<int> sizes_of(const std::vector<CubinParameter>& params) {
  std::vector<int> out;
  for (const auto& p : params) out.push_back(p.bytes);
  return out;
}

/// scale(X, Y, n, alpha) over `n` floats in programs of 256.
struct ScaleLaunch {
  std::unique_ptr<Buffer> x, y;
  std::vector<KernelArg> args;
  LaunchGeometry geometry;
  ScaleLaunch(Device& d, int n, std::int64_t block_threads) {
    x = std::move(d.allocate(n * sizeof(float))).value();
    y = std::move(d.allocate(n * sizeof(float))).value();
    args = {KernelArg::of(*x), KernelArg::of(*y), KernelArg::of(std::int32_t{n}), KernelArg::of(2.0f)};
    geometry.block = {block_threads, 1, 1};
    geometry.grid = {(n + 255) / 256, 1, 1};
  }
};

std::uintptr_t pointer_param(const std::vector<std::uint8_t>& bytes) {
  std::uintptr_t p = 0;
  std::memcpy(&p, bytes.data(), sizeof p);
  return p;
}

}  // namespace

TEST_CASE("A cubin's EIATTR_KPARAM_INFO gives each parameter's ordinal, offset and size", "[triton]") {
  auto image = read_elf_image(bytes_of(kData / "cuda-sm_90a" / "scale.cubin"));
  REQUIRE(image.ok());
  auto info = read_cubin_info(*image);
  REQUIRE(info.ok());
  REQUIRE(info->kernels.size() == 1);
  const auto& params = info->kernels[0].parameters;
  // X, Y, n, alpha, then Triton's global and profile scratch pointers.
  CHECK(sizes_of(params) == std::vector<int>{8, 8, 4, 4, 8, 8});
  for (std::size_t i = 0; i < params.size(); ++i) CHECK(params[i].ordinal == static_cast<int>(i));
  CHECK(params[1].offset == 8);
  CHECK(params[3].offset == 20);
  CHECK(params[4].offset == 24);
}

TEST_CASE("An AMDGPU code object's kernarg metadata gives the explicit arguments", "[triton]") {
  if (!code_object_reader_available()) {
    WARN("SKIPPED: kforge built without LLVM reads no AMDGPU code objects");
    return;
  }
  auto co = read_amd_code_object(bytes_of(kData / "hip-gfx942" / "scale.hsaco"));
  REQUIRE(co.ok());
  const AmdKernelMetadata* k = co->find("scale");
  REQUIRE(k);
  std::vector<int> explicit_sizes;
  for (const auto& a : k->arguments)
    if (!a.hidden()) explicit_sizes.push_back(static_cast<int>(a.bytes));
  CHECK(explicit_sizes == std::vector<int>{8, 8, 4, 4, 8, 8});
  CHECK(k->arguments[0].value_kind == "global_buffer");
  CHECK(k->arguments[2].value_kind == "by_value");
  CHECK(k->arguments[2].offset == 16);
}

TEST_CASE("A Triton launch record gives the kernel's launch ABI", "[triton]") {
  auto cuda_kernel = read_triton_kernel(kData / "cuda-sm_90a" / "scale.json");
  REQUIRE(cuda_kernel.ok());
  CHECK(cuda_kernel->kernel_name == "scale");
  CHECK(cuda_kernel->format == BinaryFormat::kCubin);
  REQUIRE(cuda_kernel->abi);
  const LaunchAbi& abi = *cuda_kernel->abi;
  CHECK(abi.compiler == "Triton 3.9.0");
  CHECK(abi.block_threads == 128);  // num_warps 4 x 32
  CHECK(abi.cluster_ctas == 1);
  CHECK(abi.binary_parameter_bytes() == std::vector<int>{8, 8, 4, 4, 8, 8});
  CHECK(abi.parameters[3].type == "fp32");

  if (!code_object_reader_available()) return;
  auto hip_kernel = read_triton_kernel(kData / "hip-gfx942" / "scale.json");
  REQUIRE(hip_kernel.ok());
  CHECK(hip_kernel->format == BinaryFormat::kHsaco);
  CHECK(hip_kernel->abi->block_threads == 256);  // num_warps 4 x 64 on CDNA
}

TEST_CASE("A launch record whose parameters disagree with the binary's table is refused", "[triton]") {
  auto record = record_of("cuda-sm_90a");
  const auto binary = bytes_of(kData / "cuda-sm_90a" / "scale.cubin");
  SECTION("a parameter missing") {
    record["parameters"].erase(2);
    auto k = triton_compiled_kernel(record, binary);
    REQUIRE_FALSE(k.ok());
    CHECK(k.error().code == ErrorCode::kBadInput);
    CHECK_THAT(k.error().message, Catch::Contains("scale: the cubin takes 6 parameters of 8 8 4 4 8 8 bytes, "
                                                  "Triton 3.9.0's signature 5 of 8 8 4 8 8 bytes"));
  }
  SECTION("a parameter of the wrong size") {
    record["parameters"][2]["type"] = "i64";
    auto k = triton_compiled_kernel(record, binary);
    REQUIRE_FALSE(k.ok());
    CHECK_THAT(k.error().message, Catch::Contains("of 8 8 8 4 8 8 bytes"));
  }
  SECTION("an unknown type, named with its field") {
    record["parameters"][1]["type"] = "float";
    auto k = triton_compiled_kernel(record, binary);
    REQUIRE_FALSE(k.ok());
    CHECK_THAT(k.error().message, Catch::Contains("parameters[1] (Y).type: unknown Triton type 'float'"));
  }
}

TEST_CASE("Triton launches kforge does not make yet are refused with the reason", "[triton]") {
  auto record = record_of("cuda-sm_90a");
  const auto binary = bytes_of(kData / "cuda-sm_90a" / "scale.cubin");
  SECTION("programmatic dependent launch") {
    record["metadata"]["launch_pdl"] = true;
    auto k = triton_compiled_kernel(record, binary);
    REQUIRE_FALSE(k.ok());
    CHECK(k.error().code == ErrorCode::kUnsupported);
    CHECK_THAT(k.error().message, Catch::Contains("scale is not launched by kforge: it needs programmatic"));
  }
  SECTION("a cooperative grid") {
    record["metadata"]["launch_cooperative_grid"] = true;
    CHECK_THAT(triton_compiled_kernel(record, binary).error().message, Catch::Contains("cooperative launch"));
  }
  SECTION("host-built tensor descriptors") {
    record["metadata"]["tensordesc_meta"] = nlohmann::json::array({{{"swizzle", 128}}});
    CHECK_THAT(triton_compiled_kernel(record, binary).error().message,
               Catch::Contains("tensor descriptors built on the host"));
  }
}

TEST_CASE("The CUDA device launches a Triton binary with its scratch, one per stream, and dynamic shared memory",
          "[triton]") {
  FakeGpu::get().reset();
  auto device = open_cuda_device(test::fake_cuda_driver(), 0);
  REQUIRE(device.ok());
  auto record = record_of("cuda-sm_90a");
  record["metadata"]["shared"] = 96 * 1024;  // past 48 KiB: the kernel must opt in
  record["metadata"]["global_scratch_size"] = 100;
  record["metadata"]["global_scratch_align"] = 128;
  auto kernel = (*device)->load(kernel_of("cuda-sm_90a", record));
  REQUIRE(kernel.ok());
  CHECK(FakeGpu::get().set_dynamic_shared == 96 * 1024);

  ScaleLaunch launch(**device, 1000, 128);
  auto ms = (*device)->launch(**kernel, launch.args, launch.geometry);
  REQUIRE(ms.ok());
  REQUIRE(FakeGpu::get().launches.size() == 1);
  const auto& l = FakeGpu::get().launches[0];
  CHECK(l.kernel == "scale");
  CHECK(l.grid == std::array<unsigned, 3>{4, 1, 1});
  CHECK(l.block == std::array<unsigned, 3>{128, 1, 1});
  CHECK(l.shared_bytes == 96 * 1024);
  REQUIRE(l.params.size() == 6);
  // Global scratch: 4 programs x 100 bytes padded to 128; profile scratch: none.
  const std::uintptr_t scratch = pointer_param(l.params[4]);
  REQUIRE(scratch != 0);
  CHECK(FakeGpu::get().allocations.at(scratch) >= 4 * 128);
  CHECK(pointer_param(l.params[5]) == 0);

  // A larger grid grows the scratch; an enqueue passes it too.
  ScaleLaunch larger(**device, 4000, 128);
  REQUIRE((*device)->enqueue(**kernel, larger.args, larger.geometry).ok());
  REQUIRE((*device)->synchronize().ok());
  const std::uintptr_t grown = pointer_param(FakeGpu::get().launches.back().params[4]);
  CHECK(FakeGpu::get().allocations.at(grown) >= 16 * 128);

  // Launches on another stream may overlap this one's: they get their own.
  ForeignMemory* foreign = foreign_memory(**device);
  REQUIRE(foreign != nullptr);
  foreign->use_caller_stream(0x5eed);
  REQUIRE((*device)->launch(**kernel, launch.args, launch.geometry).ok());
  foreign->use_own_stream();
  const std::uintptr_t theirs = pointer_param(FakeGpu::get().launches.back().params[4]);
  CHECK(theirs != 0);
  CHECK(theirs != grown);
  CHECK(FakeGpu::get().allocations.count(grown) == 1);
  // Back on the device's own stream: its grown scratch again.
  REQUIRE((*device)->launch(**kernel, launch.args, launch.geometry).ok());
  CHECK(pointer_param(FakeGpu::get().launches.back().params[4]) == grown);
}

TEST_CASE("The CUDA device launches a Triton cluster kernel in clusters of num_ctas", "[triton]") {
  FakeGpu::get().reset();
  auto device = open_cuda_device(test::fake_cuda_driver(), 0);
  REQUIRE(device.ok());
  auto kernel = (*device)->load(kernel_of("cuda-sm_90a-ctas2", record_of("cuda-sm_90a-ctas2")));
  REQUIRE(kernel.ok());
  ScaleLaunch launch(**device, 1000, 128);
  REQUIRE((*device)->launch(**kernel, launch.args, launch.geometry).ok());
  const auto& l = FakeGpu::get().launches.at(0);
  CHECK(l.grid == std::array<unsigned, 3>{8, 1, 1});  // gridX x num_ctas, as Triton launches it
  CHECK(l.cluster == std::array<unsigned, 3>{2, 1, 1});
}

TEST_CASE("A Triton launch's block and arguments are checked before anything is enqueued", "[triton]") {
  FakeGpu::get().reset();
  auto device = open_cuda_device(test::fake_cuda_driver(), 0);
  REQUIRE(device.ok());
  auto kernel = (*device)->load(kernel_of("cuda-sm_90a", record_of("cuda-sm_90a")));
  REQUIRE(kernel.ok());
  ScaleLaunch launch(**device, 1000, 128);
  SECTION("a block other than num_warps x 32") {
    launch.geometry.block = {256, 1, 1};
    auto r = (*device)->enqueue(**kernel, launch.args, launch.geometry);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("scale runs 128 threads per block"));
    CHECK_THAT(r.error().message, Catch::Contains("the launch asked 256"));
  }
  SECTION("an argument missing") {
    launch.args.pop_back();
    auto r = (*device)->launch(**kernel, launch.args, launch.geometry);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("scale takes 4 arguments (Triton 3.9.0), 3 given"));
  }
  SECTION("a float where the kernel takes a pointer") {
    launch.args[1] = KernelArg::of(1.0f);
    auto r = (*device)->enqueue(**kernel, launch.args, launch.geometry);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::kBadInput);
    CHECK_THAT(r.error().message, Catch::Contains("argument 1 (Y) is a float for a parameter of type *fp32"));
  }
  CHECK(FakeGpu::get().launches.empty());
}

TEST_CASE("The HIP device launches a Triton HSACO and refuses clusters", "[triton]") {
  if (!code_object_reader_available()) {
    WARN("SKIPPED: kforge built without LLVM reads no AMDGPU code objects");
    return;
  }
  FakeGpu::get().reset();
  auto device = open_hip_device(test::fake_hip_runtime(), 0);
  REQUIRE(device.ok());
  auto record = record_of("hip-gfx942");
  auto kernel = (*device)->load(kernel_of("hip-gfx942", record));
  REQUIRE(kernel.ok());
  ScaleLaunch launch(**device, 1000, 256);
  REQUIRE((*device)->launch(**kernel, launch.args, launch.geometry).ok());
  const auto& l = FakeGpu::get().launches.at(0);
  CHECK(l.block == std::array<unsigned, 3>{256, 1, 1});
  CHECK(l.params.size() == 6);

  record["metadata"]["num_ctas"] = 2;
  auto clustered = (*device)->load(kernel_of("hip-gfx942", record));
  REQUIRE_FALSE(clustered.ok());
  CHECK(clustered.error().code == ErrorCode::kUnsupported);
  CHECK_THAT(clustered.error().message, Catch::Contains("clusters of 2 CTAs, which HIP devices do not launch"));
}
