// GPU backends without a GPU: dynamic loading errors, compile-only targets,
// occupancy and pruning, architecture guards, ptxas log parsing, listing.
#include <catch2/catch.hpp>

#include "generator/operator.hpp"
#include "generator/search_space.hpp"
#include "runtime/catalog/arch_guard.hpp"
#include "runtime/device/cuda/cuda_backend.hpp"
#include "runtime/device/cuda/cuda_ptxas_log.hpp"
#include "runtime/device/occupancy.hpp"
#include "runtime/device/sticky_error.hpp"
#include "runtime/device/target.hpp"
#include "runtime/platform/dynamic_library.hpp"
#include "templates/builtin_templates.hpp"

using namespace kforge;

TEST_CASE("dynamic_library names the missing library and symbol", "[cuda][unit]") {
  auto missing = DynamicLibrary::open("CUDA driver", {"libkforge-no-such-lib.so.1"});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == ErrorCode::kNotFound);
  CHECK(missing.error().message.find("CUDA driver (libkforge-no-such-lib.so.1) not found") == 0);

  auto libc = DynamicLibrary::open("C library", {"libc.so.6"});
  REQUIRE(libc.ok());
  void (*fn)() = nullptr;
  auto s = libc->bind(fn, "kforge_no_such_symbol");
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message == "symbol kforge_no_such_symbol not found in libc.so.6");
  int (*getpid_fn)() = nullptr;
  REQUIRE(libc->bind(getpid_fn, "getpid").ok());
  CHECK(getpid_fn() > 0);
}

TEST_CASE("compile-only targets parse and describe their architecture", "[cuda][unit]") {
  auto t = parse_target("cuda:sm_90");
  REQUIRE(t.ok());
  CHECK(t->backend == "cuda");
  CHECK(t->info.arch == "sm_90");
  CHECK(t->info.simd_width == 32);
  CHECK(t->info.local_mem_bytes == 48 * 1024);
  CHECK(t->resources.shared_per_block_optin == 227 * 1024);
  auto h = parse_target("hip:gfx90a");
  REQUIRE(h.ok());
  CHECK(h->info.simd_width == 64);
  CHECK(h->resources.registers_per_unit == 512);

  auto bad_arch = parse_target("cuda:sm_91");
  REQUIRE_FALSE(bad_arch.ok());
  CHECK(bad_arch.error().code == ErrorCode::kBadInput);
  CHECK(bad_arch.error().message.find("--target: unknown architecture 'sm_91' for cuda (known: sm_75") == 0);
  CHECK_FALSE(parse_target("opencl:0").ok());
  CHECK_FALSE(parse_target("sm_90").ok());
}

TEST_CASE("a target's max_shared_bytes is its opt-in limit, and old records fall back", "[cuda][unit]") {
  CHECK(parse_target("cuda:sm_80")->info.limits().max_shared_bytes == 163 * 1024);
  CHECK(parse_target("cuda:sm_90")->info.limits().max_shared_bytes == 227 * 1024);
  CHECK(parse_target("cuda:sm_90")->info.limits().local_mem_bytes == 48 * 1024);
  CHECK(parse_target("hip:gfx90a")->info.limits().max_shared_bytes == 64 * 1024);
  // A device recorded before the field existed reads as having no opt-in.
  nlohmann::json old = parse_target("cuda:sm_90")->info.to_json();
  old.erase("max_shared_bytes");
  CHECK(DeviceInfo::from_json(old).limits().max_shared_bytes == 48 * 1024);
}

TEST_CASE("gemm_mma_sync's shared-memory constraint reads the target", "[cuda][unit]") {
  auto builtins = builtin_templates();
  REQUIRE(builtins.ok());
  const TemplateSource* tpl = nullptr;
  for (const auto& t : *builtins)
    if (t.manifest.name == "gemm_mma_sync") tpl = &t;
  REQUIRE(tpl != nullptr);
  const Operator* op = find_operator("gemm");
  REQUIRE(op != nullptr);
  Problem p;
  p.op = "gemm";
  p.dims = {{"M", 96}, {"N", 96}, {"K", 96}, {"batch", 1}};
  p.dtype = Dtype::kF16;
  REQUIRE(op->normalize(p).ok());
  p = *op->normalize(p);
  auto count = [&](const DeviceLimits& limits) {
    auto all = SearchSpace(tpl->manifest, *op, p, limits).enumerate();
    REQUIRE(all.ok());
    return all->size();
  };
  // The largest configuration (BM 128, BN 128, STAGES 4) needs 75776 bytes:
  // within sm_80's and sm_90's opt-in, so both keep all 24 configurations,
  // as under the former literal 96 KiB limit; 64 KiB of shared memory
  // (sm_75's opt-in) prunes the 2 that need more.
  DeviceLimits limits = parse_target("cuda:sm_80")->info.limits();
  CHECK(count(limits) == 24);
  CHECK(count(parse_target("cuda:sm_90")->info.limits()) == 24);
  limits.max_shared_bytes = 98304;
  CHECK(count(limits) == 24);
  limits.max_shared_bytes = 64 * 1024;
  CHECK(count(limits) == 22);
}

TEST_CASE("occupancy follows registers, shared memory and block size", "[cuda][unit]") {
  const DeviceInfo sm90 = parse_target("cuda:sm_90")->info;
  const ArchResources a = *arch_resources("cuda", "sm_90");
  ResourceReport r;
  r.registers = 32;
  r.local_mem_bytes = 0;
  // 256 threads x 32 registers: 8 warps x 1024 registers; threads limit 2048/256 = 8 blocks = 64 warps.
  auto d = occupancy_detail(r, 256, a);
  CHECK(d.blocks_per_unit == 8);
  CHECK(d.occupancy == Approx(1.0));
  // 128 registers: 4096 per warp, 16 warps per SM, 2 blocks of 8 warps.
  r.registers = 128;
  d = occupancy_detail(r, 256, a);
  CHECK(d.blocks_per_unit == 2);
  CHECK(d.limiter == "registers");
  CHECK(d.occupancy == Approx(0.25));
  // 100 KB of shared memory (+1 KB reserve): 2 blocks in 228 KB.
  r.registers = 32;
  r.local_mem_bytes = 100 * 1024;
  d = occupancy_detail(r, 256, a);
  CHECK(d.blocks_per_unit == 2);
  CHECK(d.limiter == "shared memory");
  CHECK(occupancy(r, 256, sm90) == Approx(0.25));
  CHECK(occupancy(r, 2048, sm90) == 0.0);  // above 1024 threads per block

  // AMD gfx90a: 128 VGPRs -> 4 waves per SIMD -> 16 per CU; 256 threads = 4 waves -> 4 blocks of 32 slots.
  const ArchResources g = *arch_resources("hip", "gfx90a");
  ResourceReport v;
  v.registers = 128;
  auto dg = occupancy_detail(v, 256, g);
  CHECK(dg.blocks_per_unit == 4);
  CHECK(dg.occupancy == Approx(0.5));
}

TEST_CASE("prune_reason: spills and useless occupancy are pruned, the rest kept", "[cuda][unit]") {
  const DeviceInfo sm80 = parse_target("cuda:sm_80")->info;
  ResourceReport r;
  r.registers = 64;
  r.local_mem_bytes = 16 * 1024;
  r.spill_stores = 0;
  r.spill_loads = 0;
  CHECK_FALSE(prune_reason(r, sm80, 256).has_value());

  r.spill_stores = 8;
  auto spill = prune_reason(r, sm80, 256);
  REQUIRE(spill.has_value());
  CHECK(spill->find("spills registers on sm_80: 8 bytes of spill stores") == 0);
  // hipRTC's code object counts registers, not bytes.
  auto hip_spill = prune_reason(r, parse_target("hip:gfx90a")->info, 256);
  REQUIRE(hip_spill.has_value());
  CHECK(*hip_spill == "spills registers on gfx90a: 8 registers spilled (VGPRs + SGPRs)");

  r.spill_stores = 0;
  r.local_mem_bytes = 200 * 1024;  // above sm_80's 163 KB opt-in
  auto big = prune_reason(r, sm80, 256);
  REQUIRE(big.has_value());
  CHECK(big->find("shared memory per block") != std::string::npos);

  // One 32-thread block of 255 registers and 150 KB: 1 warp of 64 resident.
  r.registers = 255;
  r.local_mem_bytes = 150 * 1024;
  auto low = prune_reason(r, sm80, 32);
  REQUIRE(low.has_value());
  CHECK(low->find("occupancy 1.6% on sm_80") == 0);
  // Without a block size the kernel's launch bound is used.
  r.max_block_threads = 32;
  CHECK(prune_reason(r, sm80).has_value());
  // An architecture without a table: only spills count.
  DeviceInfo unknown = sm80;
  unknown.arch = "sm_99";
  CHECK_FALSE(prune_reason(r, unknown, 32).has_value());
}

TEST_CASE("architecture guards match their documented syntax", "[cuda][unit]") {
  TemplateManifest m;
  m.name = "gemm_mma_sync";
  CHECK(check_arch_guard(m, "opencl", "x86_64-haswell").ok());  // portable: no guard
  m.arch_guard = {"sm_80+"};
  CHECK(check_arch_guard(m, "cuda", "sm_80").ok());
  CHECK(check_arch_guard(m, "cuda", "sm_90a").ok());
  auto old = check_arch_guard(m, "cuda", "sm_75");
  REQUIRE_FALSE(old.ok());
  CHECK(old.error().code == ErrorCode::kUnsupported);
  CHECK(old.error().message == "gemm_mma_sync requires sm_80+ (device is sm_75)");
  CHECK_FALSE(check_arch_guard(m, "hip", "gfx90a").ok());
  CHECK(check_arch_guard(m, "opencl", "sm_90").error().message ==
        "gemm_mma_sync requires sm_80+ (device is sm_90, backend opencl)");
  m.arch_guard = {"sm_90a"};
  CHECK(check_arch_guard(m, "cuda", "sm_90a").ok());
  CHECK_FALSE(check_arch_guard(m, "cuda", "sm_90").ok());
  m.arch_guard = {"gfx90a", "gfx94+"};
  CHECK(check_arch_guard(m, "hip", "gfx90a:sramecc+:xnack-").ok());
  CHECK(check_arch_guard(m, "hip", "gfx942").ok());
  CHECK_FALSE(check_arch_guard(m, "hip", "gfx908").ok());
  m.arch_guard = {"sm80"};
  auto bad = check_arch_guard(m, "cuda", "sm_80");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == ErrorCode::kBadInput);
  CHECK(bad.error().message.find("arch_guard entry 'sm80'") == 0);
}

TEST_CASE("ptxas' verbose log and PTX give the resource report", "[cuda][unit]") {
  const std::string log =
      "ptxas info    : 4 bytes gmem\n"
      "ptxas info    : Compiling entry function 'other' for 'sm_90'\n"
      "ptxas info    : Used 99 registers, 16 bytes smem\n"
      "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
      "ptxas info    : Function properties for k\n"
      "ptxas         .     256 bytes stack frame, 12 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Used 40 registers, used 1 barriers, 256 bytes cumulative stack size, 1024 bytes smem\n";
  const PtxasReport r = parse_ptxas_log(log, "k");
  CHECK(r.registers == 40);
  CHECK(r.shared_bytes == 1024);
  CHECK(r.stack_bytes == 256);
  CHECK(r.spill_store_bytes == 12);
  CHECK(r.spill_load_bytes == 8);
  CHECK(parse_ptxas_log(log, "absent").registers == -1);

  const std::string ptx =
      ".global .align 4 .u32 kf_dynamic_shared_bytes = 65536;\n"
      ".visible .entry k(\n .param .u32 k_param_0\n)\n.maxntid 128, 2, 1\n{\n ret;\n}\n";
  CHECK(ptx_max_threads(ptx, "k") == 256);
  CHECK(ptx_max_threads(ptx, "absent") == -1);
  CHECK(ptx_global_value(ptx, "kf_dynamic_shared_bytes") == 65536);
  CHECK_FALSE(ptx_global_value(ptx, "other").has_value());
}

TEST_CASE("without a CUDA driver there are no CUDA devices and no error", "[cuda][unit]") {
  const auto devices = list_cuda_devices();
  const std::string reason = cuda_unavailable_reason();
  if (reason.empty()) {
    WARN("a CUDA driver is present here: " << devices.size() << " device(s)");
  } else {
    CHECK(devices.empty());
    CHECK(reason.find("CUDA driver") != std::string::npos);
    auto dev = open_cuda_device(0);
    REQUIRE_FALSE(dev.ok());
    CHECK(dev.error().message == reason);
  }
  CHECK(is_sticky_device_error(sticky_device_error("launch failed", "CUDA_ERROR_ILLEGAL_ADDRESS")));
  CHECK_FALSE(is_sticky_device_error(Error{ErrorCode::kLaunch, "launch failed", {}}));
}

TEST_CASE("ptxas' coded remarks become diagnostics, and a serialized wgmma prunes", "[cuda][unit]") {
  // Recorded from ptxas 13.0 (nvcc -arch=sm_90a -Xptxas -v) on a kernel that
  // reads a wgmma accumulator inside the pipeline and uses setmaxnreg
  // without a register count at entry.
  const std::string log =
      "ptxas info    : (C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to determine register "
      "count at entry.\n"
      "ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized due to "
      "non wgmma instructions reading accumulator registers of  a wgmma between start and end of the pipeline "
      "stage in the function 'k'\n"
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
      "ptxas info    : (C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to determine register "
      "count at entry.\n"
      "ptxas info    : Used 34 registers, used 0 barriers\n";
  const auto d = parse_ptxas_diagnostics(log);
  REQUIRE(d.size() == 2);  // the repeated C7508 once
  CHECK(d[0].code == "C7508");
  CHECK(d[0].message.rfind("Potential Performance Loss: 'setmaxnreg' ignored", 0) == 0);
  CHECK_FALSE(d[0].serializes_tensor_ops);
  CHECK(d[1].code == "C7514");
  CHECK(d[1].serializes_tensor_ops);
  CHECK(parse_ptxas_diagnostics("ptxas info    : Used 34 registers\nC7514 (no prefix)\n").empty());

  DeviceInfo target;
  target.backend = "cuda";
  target.arch = "sm_90a";
  ResourceReport r;
  r.registers = 34;
  r.spill_stores = r.spill_loads = 0;
  r.diagnostics = {d[0]};
  CHECK_FALSE(prune_reason(r, target, 128).has_value());  // setmaxnreg ignored: slower, not pruned
  r.diagnostics = d;
  const auto why = prune_reason(r, target, 128);
  REQUIRE(why.has_value());
  CHECK(why->rfind("ptxas C7514 on sm_90a: Potential Performance Loss: wgmma.mma_async", 0) == 0);
  // The report keeps them, and the binary cache reads them back.
  const auto j = r.to_json();
  REQUIRE(j.contains("diagnostics"));
  CHECK(j["diagnostics"].size() == 2);
  CHECK(j["diagnostics"][1]["code"] == "C7514");
  CHECK_FALSE(ResourceReport{}.to_json().contains("diagnostics"));
}
