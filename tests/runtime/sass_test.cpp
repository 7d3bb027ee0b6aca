// SASS: nvdisasm's listing parsed (offsets, predicates, modifiers, padding),
// opcodes sorted into the instruction-mix categories, and the instructions
// NVRTC really emits for the tensor-core GEMM: HMMA from mma.sync, LDGSTS
// from cp.async. The last needs nvdisasm (KFORGE_NVDISASM, set by the build where it finds one);
// without it those tests print "SKIPPED: nvdisasm" and ctest skips them.
#include <catch2/catch.hpp>

#include <map>

#include "generator/config.hpp"
#include "generator/instance.hpp"
#include "generator/operator.hpp"
#include "runtime/binaries/instruction_mix.hpp"
#include "runtime/binaries/sass_disassembler.hpp"
#include "runtime/device/cuda/cuda_backend.hpp"
#include "runtime/device/target.hpp"
#include "templates/builtin_templates.hpp"
#include "tests/test_util.hpp"

using namespace kforge;

namespace {

// nvdisasm -c output for a two-kernel cubin, trimmed: section headers,
// labels, a predicated EXIT, a self-branch and the NOP padding.
constexpr const char* kListing = R"(	.target	sm_90
//--------------------- .text.kf_second           --------------------------
	.section	.text.kf_second,"ax",@progbits
kf_second:
.text.kf_second:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   HMMA.16816.F32.BF16 R4, R8, R12, R4 ;
        /*0020*/                   EXIT ;
//--------------------- .text.kf_probe            --------------------------
	.section	.text.kf_probe,"ax",@progbits
        .global         kf_probe
kf_probe:
.text.kf_probe:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0060*/                   ISETP.GE.AND P0, PT, R7, UR4, PT ;
.L_x_1:
        /*0070*/               @P0 EXIT ;
        /*00c0*/                   LDG.E R2, desc[UR4][R2.64] ;
        /*00f0*/              @!P1 FFMA R7, R2, R9, 1 ;
        /*0100*/                   STG.E desc[UR4][R4.64], R7 ;
        /*0110*/                   EXIT ;
.L_x_0:
        /*0120*/                   BRA `(.L_x_0);
        /*0130*/                   NOP;
        /*0140*/                   NOP;
.L_x_3:
)";

std::map<std::string, std::int64_t> sass_mix(const std::vector<SassFunction>& fns, const std::string& kernel) {
  std::vector<std::string> mnemonics;
  for (const auto& fn : fns)
    if (fn.name == kernel)
      for (const auto& i : fn.instructions) mnemonics.push_back(i.mnemonic);
  const auto categories = tally_mix(Isa::kSass, mnemonics).categories;
  return {categories.begin(), categories.end()};
}

/// nvdisasm's path, or empty after printing why the test is skipped.
bool have_nvdisasm() {
  auto found = find_nvdisasm();
  if (found.ok()) return true;
  REQUIRE(found.error().code == ErrorCode::kNotFound);  // a KFORGE_NVDISASM that is wrong fails
  WARN("SKIPPED: " << found.error().message);
  return false;
}

/// The cubin of gemm_mma_sync with `config` for a 96^3 `dtype` problem in `layout`, on `arch`.
std::vector<std::uint8_t> mma_cubin(const std::string& config, Dtype dtype, const std::string& layout,
                                    const std::string& arch) {
  auto builtins = builtin_templates();
  REQUIRE(builtins.ok());
  const TemplateSource* tpl = nullptr;
  for (const auto& t : *builtins)
    if (t.manifest.name == "gemm_mma_sync") tpl = &t;
  REQUIRE(tpl != nullptr);
  const Operator* op = find_operator("gemm");
  Problem p;
  p.op = "gemm";
  for (const auto& dim : op->dims()) p.dims[dim] = dim == "batch" ? 1 : 96;
  p.dtype = dtype;
  p.layout = *parse_layout(layout);
  auto normalized = op->normalize(p);
  REQUIRE(normalized.ok());
  auto c = Config::parse(config);
  REQUIRE(c.ok());
  const Target t = *parse_target("cuda:" + arch);
  auto inst = instantiate(*tpl, prelude_text("cuda"), *op, *c, *normalized, t.info.limits());
  INFO(config);
  REQUIRE(inst.ok());
  auto out = nvrtc_compile(inst->source, inst->kernel_name, arch, "");
  if (!out.ok()) FAIL(out.error().message << "\n" << out.error().context);
  return out->kernel.binary;
}

}  // namespace

TEST_CASE("SASS: nvdisasm's listing becomes functions of instructions", "[sass]") {
  auto fns = parse_sass(kListing);
  REQUIRE(fns.ok());
  REQUIRE(fns->size() == 2);
  CHECK((*fns)[0].name == "kf_second");
  CHECK((*fns)[0].instructions.size() == 3);
  CHECK((*fns)[0].instructions[1].mnemonic == "HMMA.16816.F32.BF16");

  const auto& probe = (*fns)[1];
  CHECK(probe.name == "kf_probe");
  REQUIRE(probe.instructions.size() == 8);  // the two NOPs that pad the end are not counted
  CHECK(probe.instructions[1].offset == 0x60);
  CHECK(probe.instructions[2].mnemonic == "EXIT");  // "@P0 EXIT": the guard is not the opcode
  CHECK(probe.instructions[2].text == "@P0 EXIT");
  CHECK(probe.instructions[4].mnemonic == "FFMA");
  CHECK(probe.instructions[4].text == "@!P1 FFMA R7, R2, R9, 1");
  CHECK(probe.instructions[7].mnemonic == "BRA");

  const auto mix = sass_mix(*fns, "kf_probe");
  CHECK(mix.at("ld_global") == 1);
  CHECK(mix.at("st_global") == 1);
  CHECK(mix.at("fma") == 1);
  CHECK(mix.at("branch") == 3);
  CHECK(mix.at("mma") == 0);
  CHECK(sass_mix(*fns, "kf_second").at("mma") == 1);

  auto none = parse_sass("\t.target\tsm_90\n\n");
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().code == ErrorCode::kBadInput);
  CHECK_THAT(none.error().message, Catch::Contains(".text.<kernel>"));
}

TEST_CASE("SASS: opcodes sort into the instruction-mix categories", "[sass]") {
  const std::map<std::string, std::string> expected = {
      {"HMMA.16816.F32.BF16", "mma"},   {"HGMMA.64x128x16.F32.BF16", "mma"},
      {"IMMA.16832.S8.S8", "mma"},      {"HFMA2.MMA", "fma"},  // a move on the FMA pipe, not a tensor op
      {"UTMALDG.2D", "tma"},            {"UBLKCP.S.G", "tma"},
      {"LDSM.16.M88.4", "ldmatrix"},    {"LDSM.16.MT88.4", "ldmatrix"},
      {"LDG.E.128.CONSTANT", "ld_global"}, {"STG.E.64", "st_global"},
      {"LDS.128", "ld_shared"},         {"STS.U16", "st_shared"},
      {"LDGSTS.E.BYPASS.LTC128B.128", "cp_async"}, {"LDGDEPBAR", "cp_async"},
      {"BAR.SYNC.DEFER_BLOCKING", "barrier"}, {"SYNCS.ARRIVE.TRANS64.A1T0", "barrier"},
      {"DEPBAR.LE", "barrier"},         {"WARPGROUP.ARRIVE", "barrier"},
      {"FFMA", "fma"},                  {"F2FP.BF16.F32.PACK_AB", "cvt"},
      {"BRA", "branch"},                {"EXIT", "branch"},
      {"IMAD.WIDE", "other"},           {"S2R", "other"}};
  for (const auto& [opcode, category] : expected) {
    INFO(opcode);
    CHECK(sass_category(opcode) == category);
  }
  const auto& order = mix_categories(Isa::kSass);
  CHECK(order.front() == "mma");
  CHECK(order.back() == "other");
}

TEST_CASE("SASS: a KFORGE_NVDISASM that is not an executable is an error naming it", "[sass]") {
  test::TempDir tmp;
  test::write_file(tmp.file("nvdisasm"), "not a program");
  const test::ScopedEnv env("KFORGE_NVDISASM", tmp.file("nvdisasm"));
  auto found = find_nvdisasm();
  REQUIRE_FALSE(found.ok());
  CHECK(found.error().code == ErrorCode::kBadInput);
  CHECK_THAT(found.error().message, Catch::Contains("KFORGE_NVDISASM") && Catch::Contains(tmp.file("nvdisasm")));
  const std::vector<std::uint8_t> bytes(16, 0);
  CHECK(disassemble_sass(bytes).error().code == ErrorCode::kBadInput);
}

TEST_CASE("SASS: bytes nvdisasm cannot read are an error with its message", "[sass][cuda]") {
  if (!have_nvdisasm()) return;
  const std::vector<std::uint8_t> bytes(64, 0x5a);
  auto out = disassemble_sass(bytes);
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().code == ErrorCode::kBadInput);
  CHECK_THAT(out.error().message, Catch::StartsWith("nvdisasm could not read the cubin (exit "));
}

TEST_CASE("SASS: gemm_mma_sync runs on HMMA fed by cp.async (LDGSTS)", "[sass][cuda]") {
  if (!have_nvdisasm()) return;
  const std::string config = "BK32_BM64_BN64_STAGES2_WM2_WN2";
  for (const char* arch : {"sm_80", "sm_90"}) {
    auto fns = disassemble_sass(mma_cubin(config, Dtype::kBF16, "NN", arch));
    REQUIRE(fns.ok());
    const auto mix = sass_mix(*fns, "gemm_mma_sync__" + config);
    INFO(arch);
    // A warp's 32 x 32 tile is 2 x 4 m16n8k16 tiles, over 2 k-steps of BK = 32:
    // 16 mma.sync, each one HMMA.16816, in the main loop.
    CHECK(mix.at("mma") >= 16);
    CHECK(mix.at("cp_async") > 0);
    CHECK(mix.at("barrier") > 0);
  }
}
