// The offline HIP compiler (clang-22 as a subprocess) compiles every HIP
// template for gfx942 (MI300) and gfx950 (MI350) with no GPU, and the code
// object's metadata and disassembly say what kforge reports. Register counts
// are the compiler's and move with its version: never asserted exactly.
#include <catch2/catch.hpp>
#include <future>

#include "generator/instance.hpp"
#include "generator/operator.hpp"
#include "generator/search_space.hpp"
#include "runtime/binaries/amdgpu_disassembler.hpp"
#include "runtime/binaries/amdgpu_objdump.hpp"
#include "runtime/binaries/code_object_reader.hpp"
#include "runtime/binaries/elf_image.hpp"
#include "runtime/binaries/instruction_mix.hpp"
#include "runtime/catalog/arch_guard.hpp"
#include "runtime/device/hip/hip_offline_compiler.hpp"
#include "runtime/device/occupancy.hpp"
#include "runtime/device/target.hpp"
#include "templates/builtin_templates.hpp"

using namespace kforge;

namespace {

void require_offline_compiler() {
  const auto& t = offline_hip_toolchain();
  if (!t.ok())
    FAIL("the offline HIP compiler is required for this test (tools/deps.sh): " << t.error().message);
}

Problem probe(const Operator& op, const TemplateManifest& m) {
  Problem p;
  p.op = std::string(op.name());
  p.dims = op.default_dims();
  p.dtype = m.dtypes.front();
  p.layout = m.layouts.front();
  return *op.normalize(p);
}

struct Job {
  std::string what, arch;
  bool is_default = false;
  Instance inst;
  std::int64_t threads = 0;
};

/// Each HIP template's default configuration and two spread over its space (a third and two thirds in).
std::vector<Job> jobs_for(const std::vector<TemplateSource>& builtins, const std::string& arch) {
  std::vector<Job> jobs;
  const Target t = *parse_target("hip:" + arch);
  for (const auto& tpl : builtins) {
    const auto& m = tpl.manifest;
    if (!m.supports_target("hip") || m.is_library() || !check_arch_guard(m, "hip", arch).ok()) continue;
    const Operator* op = find_operator(m.op);
    REQUIRE(op != nullptr);
    const Problem p = probe(*op, m);
    auto all = SearchSpace(m, *op, p, t.info.limits()).enumerate();
    REQUIRE(all.ok());
    std::vector<Config> configs{m.default_config()};
    if (all->size() >= 3)
      configs.insert(configs.end(), {(*all)[all->size() / 3], (*all)[2 * all->size() / 3]});
    for (std::size_t i = 0; i < configs.size(); ++i) {
      auto inst = instantiate(tpl, prelude_text("hip"), *op, configs[i], p, t.info.limits());
      INFO(m.name << " " << configs[i].canonical_name());
      REQUIRE(inst.ok());
      const auto& b = inst->geometry.block;
      jobs.push_back({m.name + " " + inst->config_name + " " + p.key() + " on " + arch, arch, i == 0, *inst,
                      b[0] * b[1] * b[2]});
    }
  }
  return jobs;
}

}  // namespace

TEST_CASE("clang compiles every HIP template's default and two spread configurations for gfx942 and gfx950",
          "[hip][offline]") {
  require_offline_compiler();
  REQUIRE(code_object_reader_available());
  auto builtins = builtin_templates();
  REQUIRE(builtins.ok());
  std::vector<Job> jobs = jobs_for(*builtins, "gfx942");
  for (auto& j : jobs_for(*builtins, "gfx950")) jobs.push_back(std::move(j));
  REQUIRE(jobs.size() >= 2 * 14);
  // Each compile is a clang process: four at a time keep the test short.
  std::vector<Result<HiprtcOutput>> outs;
  for (std::size_t first = 0; first < jobs.size(); first += 4) {
    std::vector<std::future<Result<HiprtcOutput>>> running;
    for (std::size_t i = first; i < std::min(first + 4, jobs.size()); ++i) {
      running.push_back(std::async(std::launch::async, [&j = jobs[i]] {
        return offline_hip_compile(j.inst.source, j.inst.kernel_name, j.arch, "");
      }));
    }
    for (auto& f : running) outs.push_back(f.get());
  }
  std::size_t lds_equal = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Job& j = jobs[i];
    INFO(j.what);
    if (!outs[i].ok()) FAIL(outs[i].error().message << "\n" << outs[i].error().context);
    const AmdKernelMetadata& k = outs[i]->metadata;
    CHECK(k.name == j.inst.kernel_name);
    CHECK(k.wavefront_size == 64);
    CHECK(k.vgpr_count > 0);
    // The manifest's expression bounds the LDS (it is what the limits are checked
    // against); where a row reduces in shuffles (vector_row) the compiler needs less.
    CHECK(k.lds_bytes >= 0);
    CHECK(k.lds_bytes <= j.inst.local_memory_bytes);
    if (k.lds_bytes == j.inst.local_memory_bytes) ++lds_equal;
    CHECK(k.max_flat_workgroup_size == j.threads);
    if (j.is_default) CHECK(outs[i]->kernel.resources.spill_stores == 0);
    const OccupancyDetail occ =
        occupancy_detail(outs[i]->kernel.resources, j.threads, *arch_resources("hip", j.arch));
    CHECK_FALSE(occ.limiter.empty());
    CHECK(occ.occupancy > 0);
  }
  WARN("clang compiled " << jobs.size()
                         << " instances for gfx942 and gfx950; LDS equal to the manifest's "
                            "expression in "
                         << lds_equal);
}

TEST_CASE("the gfx942 gemm disassembles through LLVM 15 as gfx940 into the expected instruction classes",
          "[hip][offline]") {
  require_offline_compiler();
  auto builtins = builtin_templates();
  REQUIRE(builtins.ok());
  const TemplateSource* gemm = nullptr;
  for (const auto& t : *builtins)
    if (t.manifest.op == "gemm" && t.manifest.supports_target("hip") && !t.manifest.is_library()) gemm = &t;
  REQUIRE(gemm != nullptr);
  const Operator* op = find_operator("gemm");
  const Target target = *parse_target("hip:gfx942");
  auto inst = instantiate(*gemm, prelude_text("hip"), *op, gemm->manifest.default_config(),
                          probe(*op, gemm->manifest), target.info.limits());
  REQUIRE(inst.ok());
  auto out = offline_hip_compile(inst->source, inst->kernel_name, "gfx942", "");
  if (!out.ok()) FAIL(out.error().message << "\n" << out.error().context);
  auto co = read_amd_code_object(out->kernel.binary);
  REQUIRE(co.ok());
  CHECK(co->target.find("gfx942") != std::string::npos);
  auto image = read_elf_image(out->kernel.binary);
  REQUIRE(image.ok());
  auto fns = disassemble_amdgpu_functions(*image, co->target);
  if (!fns.ok()) FAIL(fns.error().message);
  std::vector<std::string> mnemonics;
  for (const auto& fn : *fns) {
    if (fn.symbol != inst->kernel_name) continue;
    CHECK(fn.undecoded_bytes == 0);
    for (const auto& i : fn.instructions) mnemonics.push_back(i.mnemonic);
  }
  const InstructionMix mix = tally_mix(Isa::kAmdgcn, mnemonics);
  INFO(mix.total << " instructions");
  for (const char* category : {"global_load", "global_store", "lds_load", "lds_store", "wait_barrier",
                               "branch", "valu", "salu", "scalar_memory"}) {
    INFO(category);
    CHECK(mix.count(category) > 0);
  }
  CHECK(mix.count("other") < mix.total / 20);  // every class kforge names covers gfx942's encoding
}

TEST_CASE("the offline compiler reports clang's errors with its command", "[hip][offline]") {
  require_offline_compiler();
  const std::string prelude(prelude_text("hip"));
  auto bad = offline_hip_compile(prelude + "KF_KERNEL void k(float* x) { x[0] = y; }\n", "k", "gfx942", "");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == ErrorCode::kCompile);
  CHECK(bad.error().message.find("build failed for k (gfx942): ") == 0);
  CHECK(bad.error().context.find("undeclared identifier 'y'") != std::string::npos);
  CHECK(bad.error().context.find("--offload-arch=gfx942") != std::string::npos);
  auto version = offline_hip_version();
  REQUIRE(version.ok());
  CHECK(version->rfind("clang ", 0) == 0);
  CHECK(version->find("(offline)") != std::string::npos);
}

TEST_CASE("without clang-22 or the device libraries the offline targets are unavailable with the reason",
          "[hip][offline]") {
  auto no_clang = find_offline_hip_toolchain("kforge-no-such-clang", "/usr");
  REQUIRE_FALSE(no_clang.ok());
  CHECK(no_clang.error().code == ErrorCode::kUnsupported);
  CHECK(no_clang.error().message ==
        "kforge-no-such-clang not found (install clang-22 lld-22 llvm-22: tools/deps.sh)");
  if (!offline_hip_toolchain().ok()) return;  // the rest needs a clang
  auto no_libs = find_offline_hip_toolchain(offline_hip_toolchain()->clang, "/nonexistent");
  REQUIRE_FALSE(no_libs.ok());
  CHECK(no_libs.error().code == ErrorCode::kUnsupported);
  CHECK(no_libs.error().message == "no ROCm device libraries with oclc_isa_version_942.bc in /nonexistent");
}

TEST_CASE("llvm-objdump's listing is read into functions, instructions and undecoded bytes",
          "[hip][offline]") {
  const std::string text =
      "\nk.co:\tfile format elf64-amdgpu\n\nDisassembly of section .text:\n\n"
      "0000000000001900 <k>:\n"
      "\ts_load_dword s8, s[0:1], 0x1c                 // 000000001900: C0020200 0000001C\n"
      "\tv_mfma_f32_32x32x16_bf16 a[0:15], v[0:3], v[4:7], 0 // 000000001908: D3B70000 04020900\n"
      "\t<unknown>                                     // 000000001910: FFFFFFFF\n"
      "\ts_endpgm                                      // 000000001914: BF810000\n"
      "\n0000000000001a00 <helper>:\n"
      "\ts_setpc_b64 s[30:31]                          // 000000001A00: BE801D1E\n";
  const auto fns = parse_objdump_output(text);
  REQUIRE(fns.size() == 2);
  CHECK(fns[0].symbol == "k");
  CHECK(fns[0].address == 0x1900);
  CHECK(fns[0].size == 0x18);
  CHECK(fns[0].undecoded_bytes == 4);
  REQUIRE(fns[0].instructions.size() == 3);
  CHECK(fns[0].instructions[1].mnemonic == "v_mfma_f32_32x32x16_bf16");
  CHECK(fns[0].instructions[1].address == 0x1908);
  CHECK(fns[0].instructions[2].text == "s_endpgm");
  CHECK(fns[1].symbol == "helper");
  CHECK(fns[1].instructions.size() == 1);
}

TEST_CASE("the gfx950 gemm disassembles through llvm-objdump-22", "[hip][offline]") {
  require_offline_compiler();
  auto builtins = builtin_templates();
  REQUIRE(builtins.ok());
  const TemplateSource* gemm = nullptr;
  for (const auto& t : *builtins)
    if (t.manifest.op == "gemm" && t.manifest.supports_target("hip") && !t.manifest.is_library()) gemm = &t;
  REQUIRE(gemm != nullptr);
  const Operator* op = find_operator("gemm");
  const Target target = *parse_target("hip:gfx950");
  auto inst = instantiate(*gemm, prelude_text("hip"), *op, gemm->manifest.default_config(),
                          probe(*op, gemm->manifest), target.info.limits());
  REQUIRE(inst.ok());
  auto out = offline_hip_compile(inst->source, inst->kernel_name, "gfx950", "");
  if (!out.ok()) FAIL(out.error().message << "\n" << out.error().context);
  auto image = read_elf_image(out->kernel.binary);
  REQUIRE(image.ok());
  auto llvm15 = disassemble_amdgpu_functions(*image, "gfx950");
  REQUIRE_FALSE(llvm15.ok());
  CHECK(llvm15.error().code == ErrorCode::kUnsupported);
  auto fns = objdump_amdgpu_functions(out->kernel.binary);
  if (!fns.ok()) FAIL(fns.error().message);
  std::vector<std::string> mnemonics;
  for (const auto& fn : *fns) {
    if (fn.symbol != inst->kernel_name) continue;
    CHECK(fn.undecoded_bytes == 0);
    for (const auto& i : fn.instructions) mnemonics.push_back(i.mnemonic);
  }
  const InstructionMix mix = tally_mix(Isa::kAmdgcn, mnemonics);
  for (const char* category :
       {"global_load", "global_store", "lds_load", "lds_store", "wait_barrier", "valu"}) {
    INFO(category);
    CHECK(mix.count(category) > 0);
  }
}
