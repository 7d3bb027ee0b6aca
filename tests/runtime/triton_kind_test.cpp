// Triton templates (kind "triton", templates/triton) read by kforge's
// manifest parser, instantiated into compile requests with their argument
// maps, and built and launched through a Lookup on the fake CUDA device: the
// operator's arguments reach the kernel's positions, strides computed from
// the problem, Triton's grid and block.
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <unistd.h>

#include "generator/backend_parameters.hpp"
#include "generator/instance.hpp"
#include "generator/operator.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "runtime/device/cuda/cuda_backend.hpp"
#include "runtime/kinds/template_kind.hpp"
#include "runtime/kinds/triton_binary.hpp"
#include "runtime/lookup/lookup.hpp"
#include "tests/runtime/fake_gpu_driver.hpp"
#include "tests/runtime/triton_lookup_fixture.hpp"

using namespace kforge;
using test::FakeGpu;

namespace {

const std::filesystem::path& kCorpus = test::kTritonCorpus;

Problem rmsnorm(std::int64_t rows, std::int64_t cols) {
  Problem p;
  p.op = "rmsnorm";
  p.dims = {{"rows", rows}, {"cols", cols}};
  return p;
}

DeviceLimits cuda_limits() {
  DeviceLimits l;
  l.max_block_threads = 1024;
  l.local_mem_bytes = 48 * 1024;
  l.max_shared_bytes = 227 * 1024;
  l.compute_units = 132;
  l.simd_width = 32;
  return l;
}

}  // namespace

TEST_CASE("Every Triton corpus manifest is read as a template of kind triton", "[triton]") {
  int read = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kCorpus)) {
    auto t = TemplateSource::load_dir(entry.path().string());
    INFO(entry.path() << ": " << (t.ok() ? std::string() : t.error().message));
    REQUIRE(t.ok());
    CHECK(t->manifest.kind == TemplateKindId::kTriton);
    REQUIRE(t->manifest.triton);
    CHECK_FALSE(t->manifest.supports_target("opencl"));
    CHECK(t->manifest.supports_target("cuda"));
    CHECK(&template_kind(*t) == &triton_kind());
    ++read;
  }
  CHECK(read == 9);
}

TEST_CASE("A Triton instance's workspaces are in its argument map, sized for the problem and configuration",
          "[triton]") {
  auto t = TemplateSource::load_dir((kCorpus / "attention_decode_splitkv_grid").string());
  REQUIRE(t.ok());
  const Operator& op = *find_operator("attention");
  Problem p;
  p.op = "attention";
  p.dims = {{"B", 2}, {"H", 3}, {"S", 5}, {"SK", 150}, {"D", 64}};
  p.attrs["mask"] = "causal";
  p.dtype = Dtype::kF16;
  Config c = t->manifest.default_config();
  c.values["SPLIT"] = 8;
  c.values["BLOCK_D"] = 64;
  auto inst = instantiate(*t, "", op, c, p, cuda_limits());
  INFO((inst.ok() ? std::string() : inst.error().message));
  REQUIRE(inst.ok());
  CHECK(inst->geometry.grid == std::array<std::int64_t, 3>{6, 8, 1});  // B * H x SPLIT
  const auto request = nlohmann::json::parse(inst->source);
  CHECK(request["signature"]["tickets"] == "*i32");
  const auto& args = request["arguments"];
  REQUIRE(args.size() == 12);
  CHECK(args[10] == nlohmann::json{{"name", "partials"}, {"workspace", 2 * 3 * 8 * 16 * (64 + 2)}, {"zeroed", false}});
  CHECK(args[11] == nlohmann::json{{"name", "tickets"}, {"workspace", 6}, {"zeroed", true}});

  LaunchAbi abi;
  apply_triton_arguments(abi, request);
  REQUIRE(abi.argument_map.size() == 12);
  CHECK(abi.argument_map[9].from == 9);  // O, the operator's
  CHECK(abi.argument_map[10].workspace == 0);
  CHECK(abi.argument_map[11].workspace == 1);
  REQUIRE(abi.workspaces.size() == 2);
  CHECK(abi.workspaces[0].name == "partials");
  CHECK(abi.workspaces[0].bytes() == 4 * 2 * 3 * 8 * 16 * 66);
  CHECK_FALSE(abi.workspaces[0].zeroed);
  CHECK(abi.workspaces[1].bytes() == 4 * 6);
  CHECK(abi.workspaces[1].zeroed);
}

TEST_CASE("A Triton instance is its compile request, Triton's grid and block, and its argument map", "[triton]") {
  auto t = TemplateSource::load_dir((kCorpus / "rmsnorm_row").string());
  REQUIRE(t.ok());
  const Operator& op = *find_operator("rmsnorm");
  Config c = t->manifest.default_config();
  c.values["ROWS"] = 2;
  c.values["num_warps"] = 4;
  c.values["BLOCK_N"] = 128;
  auto inst = instantiate(*t, "", op, c, rmsnorm(9, 100), cuda_limits());
  REQUIRE(inst.ok());
  CHECK(inst->kernel_name == "rmsnorm_row");
  CHECK(inst->geometry.grid == std::array<std::int64_t, 3>{5, 1, 1});  // ceil_div(rows, ROWS)
  CHECK(inst->geometry.block == std::array<std::int64_t, 3>{128, 1, 1});  // num_warps x 32
  const auto request = nlohmann::json::parse(inst->source);
  CHECK(request["signature"]["X"] == "*fp32");
  CHECK(request["constexprs"]["BLOCK_N"] == 128);
  CHECK(request["options"]["num_warps"] == 4);
  CHECK(request["options"]["num_stages"] == 1);  // the manifest's fixed option
  // cols = 100 is no multiple of 16: the row strides are not promised divisible.
  const auto& divisible = request["specialization"]["divisible_by_16"];
  CHECK(std::find(divisible.begin(), divisible.end(), "X") != divisible.end());
  CHECK(std::find(divisible.begin(), divisible.end(), "stride_x") == divisible.end());
  // rows, cols, eps, X, W, Y from the operator's arguments; the strides computed.
  const auto& args = request["arguments"];
  REQUIRE(args.size() >= 8);
  CHECK(args[0] == nlohmann::json{{"name", "rows"}, {"from", 0}});
  CHECK(args[3] == nlohmann::json{{"name", "X"}, {"from", 3}});
  CHECK(args[6]["value"] == 100);

  SECTION("a configuration breaking a constraint is refused naming it") {
    c.values["BLOCK_N"] = 64;
    auto bad = instantiate(*t, "", op, c, rmsnorm(9, 100), cuda_limits());
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(bad.error().message, Catch::Contains("BLOCK_N >= cols"));
  }
}

TEST_CASE("A Lookup builds a Triton template and launches it with the operator's arguments", "[triton]") {
  if (const std::string& why = triton_kind().unavailable(TemplateSource{}); !why.empty()) {
    WARN("SKIPPED: " << why);
    return;
  }
  FakeGpu::get().reset();
  auto device = open_cuda_device(test::fake_cuda_driver(), 0);
  REQUIRE(device.ok());
  auto lookup = test::rmsnorm_row_lookup(**device);
  auto selection = lookup->select(rmsnorm(9, 100));
  REQUIRE(selection.ok());
  CHECK(selection->template_name == "rmsnorm_triton_row");

  auto x = (*device)->allocate(9 * 100 * 4), w = (*device)->allocate(100 * 4), y = (*device)->allocate(9 * 100 * 4);
  REQUIRE((x.ok() && w.ok() && y.ok()));
  const std::vector<KernelArg> args = {KernelArg::of(std::int32_t{9}), KernelArg::of(std::int32_t{100}),
                                       KernelArg::of(1e-6f), KernelArg::of(**x), KernelArg::of(**w),
                                       KernelArg::of(**y)};
  auto enqueued = lookup->enqueue(*selection, args);
  INFO((enqueued.ok() ? std::string() : enqueued.error().message + "\n" + enqueued.error().context));
  REQUIRE(enqueued.ok());
  REQUIRE(FakeGpu::get().launches.size() == 1);
  const auto& l = FakeGpu::get().launches[0];
  CHECK(l.kernel == "rmsnorm_row");
  CHECK(l.grid == std::array<unsigned, 3>{5, 1, 1});
  CHECK(l.block == std::array<unsigned, 3>{128, 1, 1});
  REQUIRE(l.params.size() >= 8 + 2);  // the kernel's arguments, then Triton's two scratch pointers
  std::int32_t rows = 0, stride = 0;
  std::memcpy(&rows, l.params[0].data(), 4);
  std::memcpy(&stride, l.params[6].data(), 4);
  CHECK(rows == 9);
  CHECK(stride == 100);
  std::uintptr_t x_address = 0;
  std::memcpy(&x_address, l.params[3].data(), sizeof x_address);
  CHECK(x_address == *cuda_buffer_address(**x));
}

TEST_CASE("A tune varies only the Triton parameters that apply on its device's backend", "[triton]") {
  auto t = TemplateSource::load_dir((kCorpus / "gemm_dot").string());
  REQUIRE(t.ok());
  auto values = [](const TemplateManifest& m, const std::string& name) {
    for (const Parameter& p : m.parameters) {
      if (p.name == name) return p.values.size();
    }
    return std::size_t{0};
  };
  const TemplateManifest& declared = t->manifest;
  REQUIRE(values(declared, "waves_per_eu") == 3);
  REQUIRE(values(declared, "num_warps") > 1);
  REQUIRE(values(declared, "BLOCK_M") > 1);

  const TemplateManifest cuda = manifest_for_backend(declared, "cuda");
  CHECK(values(cuda, "waves_per_eu") == 1);  // AMD's, held at its default
  CHECK(values(cuda, "kpack") == 1);
  CHECK(values(cuda, "num_warps") == values(declared, "num_warps"));
  const TemplateManifest hip = manifest_for_backend(declared, "hip");
  CHECK(values(hip, "waves_per_eu") == 3);
  // The interpreter ignores compile options: only the constexprs vary.
  const TemplateManifest interpreted = manifest_for_backend(declared, kInterpreterBackend);
  CHECK(values(interpreted, "num_warps") == 1);
  CHECK(values(interpreted, "num_stages") == 1);
  CHECK(values(interpreted, "waves_per_eu") == 1);
  CHECK(values(interpreted, "BLOCK_M") == values(declared, "BLOCK_M"));
  CHECK(interpreted.default_config() == declared.default_config());
}

TEST_CASE("The binary cache keeps a Triton binary with its launch record, keyed on Triton", "[triton]") {
  if (const std::string& why = triton_kind().unavailable(TemplateSource{}); !why.empty()) {
    WARN("SKIPPED: " << why);
    return;
  }
  FakeGpu::get().reset();
  auto device = open_cuda_device(test::fake_cuda_driver(), 0);
  REQUIRE(device.ok());
  const auto cache_dir = std::filesystem::temp_directory_path() /
                         ("kforge-triton-cache-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(cache_dir);
  LookupOptions options;
  options.user_db = "/nonexistent/kforge-triton-cache-test.db";
  options.binary_cache_dir = cache_dir.string();
  options.env_overrides = false;
  auto prepared_in_a_fresh_lookup = [&]() -> KernelOrigin {
    auto lookup = test::rmsnorm_row_lookup(**device, options);
    auto selection = lookup->select(rmsnorm(9, 100));
    REQUIRE(selection.ok());
    auto prepared = lookup->prepare(*selection);
    INFO((prepared.ok() ? std::string() : prepared.error().message));
    REQUIRE(prepared.ok());
    std::ifstream entry((*prepared)->cache_entry, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(entry)), std::istreambuf_iterator<char>());
    CHECK_THAT(bytes, Catch::Contains("compiler=triton"));
    CHECK_THAT(bytes, Catch::Contains("\"format\":\"cubin\""));
    auto x = (*device)->allocate(9 * 100 * 4), w = (*device)->allocate(100 * 4), y = (*device)->allocate(9 * 100 * 4);
    REQUIRE((x.ok() && w.ok() && y.ok()));
    REQUIRE(lookup->enqueue(*selection, {KernelArg::of(std::int32_t{9}), KernelArg::of(std::int32_t{100}),
                                            KernelArg::of(1e-6f), KernelArg::of(**x), KernelArg::of(**w),
                                            KernelArg::of(**y)}).ok());
    return (*prepared)->origin;
  };
  CHECK(prepared_in_a_fresh_lookup() == KernelOrigin::kCompiled);
  CHECK(prepared_in_a_fresh_lookup() == KernelOrigin::kDisk);
  // Launched from the cache as when compiled: the ABI and the argument map came back.
  REQUIRE(FakeGpu::get().launches.size() == 2);
  const auto& compiled = FakeGpu::get().launches[0];
  const auto& cached = FakeGpu::get().launches[1];
  CHECK(cached.block == compiled.block);
  CHECK(cached.grid == compiled.grid);
  REQUIRE(cached.params.size() == compiled.params.size());
  std::int32_t stride = 0;
  std::memcpy(&stride, cached.params[6].data(), 4);
  CHECK(stride == 100);
  std::filesystem::remove_all(cache_dir);
}
