// kforge inspect on artifacts compiled here by `kforge compile --out` (NVRTC
// for sm_90, hipRTC for gfx90a, both through the CLI so that hipRTC never
// shares this process with anything else), plus the parsers on crafted input.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "runtime/binaries/amdgpu_disassembler.hpp"
#include "runtime/binaries/code_object_reader.hpp"
#include "runtime/binaries/cubin_attributes.hpp"
#include "runtime/binaries/elf_image.hpp"
#include "runtime/binaries/instruction_mix.hpp"
#include "runtime/binaries/ptx_module.hpp"
#include "runtime/binaries/sass_disassembler.hpp"
#include "tests/test_util.hpp"
#include "tests/tools/cli_util.hpp"

using namespace kforge;
using nlohmann::json;

namespace {

constexpr const char* kMmaConfig = "BK32_BM64_BN64_STAGES2_WM2_WN2";
constexpr const char* kSimtConfig = "BK8_BM32_BN32_PAD0_TM2_TN2_VW1";

/// An artifact directory written by `kforge compile --out`, and that command's --json output.
struct Compiled {
  std::string dir;
  json report;
};

/// Compiles one gemm configuration into a directory that lives as long as the process.
Compiled compile(const std::string& name, const std::string& flags) {
  static const test::TempDir tmp;
  Compiled c{tmp.file(name), {}};
  auto r = test::run_kforge("compile --op gemm " + flags + " --out " + c.dir + " --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  c.report = json::parse(r.out);
  REQUIRE(c.report["candidates"].size() == 1);
  REQUIRE(c.report["candidates"][0]["status"] == "ok");
  return c;
}

// Each is compiled on first use: ctest runs every test case in its own process.
const Compiled& mma() {
  static const Compiled c =
      compile("mma", "--target cuda:sm_90 --dtype f16 --config " + std::string(kMmaConfig));
  return c;
}
const Compiled& simt() {
  static const Compiled c =
      compile("simt", "--target cuda:sm_90 --dtype f16 --config " + std::string(kSimtConfig));
  return c;
}
const Compiled& hip() {
  static const Compiled c = compile("hip", "--target hip:gfx90a --config " + std::string(kSimtConfig));
  return c;
}

/// The only file in `dir` ending in `ext`.
std::string file_with(const std::string& dir, const std::string& ext) {
  std::string found;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ext) found = e.path().string();
  REQUIRE(!found.empty());
  return found;
}

json inspect(const std::string& args) {
  auto r = test::run_kforge("inspect --json " + args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  json j = json::parse(r.out);
  REQUIRE(j["schema_version"] == 1);
  return j;
}

const json& only_kernel(const json& artifact) {
  REQUIRE(artifact["kernels"].size() == 1);
  return artifact["kernels"][0];
}

}  // namespace

TEST_CASE("inspect: a cubin's register count is the one kforge compile reported", "[inspect][cuda]") {
  const json j = inspect(file_with(mma().dir, ".cubin"));
  REQUIRE(j["artifacts"].size() == 1);
  const json& art = j["artifacts"][0];
  CHECK(art["kind"] == "cubin");
  CHECK(art["target"] == "sm_90");
  const json& k = only_kernel(art);
  CHECK(k["name"] == "gemm_mma_sync__" + std::string(kMmaConfig));
  CHECK(k["registers"] == mma().report["candidates"][0]["registers"]);
  CHECK(k["frame_bytes"] == mma().report["candidates"][0]["stack_bytes"]);
  CHECK(k["max_threads"] == json::array({128, 1, 1}));  // __launch_bounds__(WM * WN * 32)
  CHECK(k["param_cbank_bytes"].get<int>() > 0);
  CHECK(k["cbank_param_bytes"] == k["param_cbank_bytes"]);
  CHECK(k["code_bytes"].get<int>() > 0);
  CHECK(k["shared_bytes"] == 0);  // its tiles live in dynamic shared memory, which the binary does not size

  // The simt kernel's static shared memory is its .nv.shared section.
  const json s = inspect(file_with(simt().dir, ".cubin"));
  const json& sk = only_kernel(s["artifacts"][0]);
  CHECK(sk["registers"] == simt().report["candidates"][0]["registers"]);
  CHECK(sk["shared_bytes"] == simt().report["candidates"][0]["shared_bytes"]);
}

TEST_CASE("inspect: PTX instruction mix of the mma.sync and the simt kernels", "[inspect][cuda]") {
  const json tensor = only_kernel(inspect(file_with(mma().dir, ".ptx"))["artifacts"][0]);
  const json& mc = tensor["instruction_mix"]["categories"];
  CHECK(mc["mma"].get<int>() > 0);
  CHECK(mc["ldmatrix"].get<int>() + mc["ld_shared"].get<int>() > 0);
  CHECK(mc["cp_async"].get<int>() > 0);  // the STAGES-deep cp.async pipeline
  CHECK(mc["barrier"].get<int>() > 0);
  int sum = 0;
  for (const auto& n : mc) sum += n.get<int>();
  CHECK(sum == tensor["instruction_mix"]["total"].get<int>());

  const json scalar = only_kernel(inspect(file_with(simt().dir, ".ptx"))["artifacts"][0]);
  const json& sc = scalar["instruction_mix"]["categories"];
  CHECK(sc["mma"] == 0);
  CHECK(sc["ld_global"].get<int>() > 0);
  CHECK(sc["st_shared"].get<int>() > 0);
}

TEST_CASE("inspect: a compile --out directory is inspected file by file", "[inspect][cuda]") {
  const json j = inspect(mma().dir);
  REQUIRE(j["artifacts"].size() == 2);  // the cubin and the PTX; the .cu source and the log are not artifacts
  CHECK(j["artifacts"][0]["kind"] == "cubin");
  CHECK(j["artifacts"][1]["kind"] == "ptx");

  auto human = test::run_kforge("inspect " + mma().dir);
  REQUIRE(human.exit_code == 0);
  CHECK_THAT(human.out, Catch::Contains("CUDA cubin for sm_90"));
  CHECK_THAT(human.out, Catch::Contains("instruction mix of gemm_mma_sync__" + std::string(kMmaConfig)));
  CHECK_THAT(human.out, Catch::Contains("cp_async"));

  auto none = test::run_kforge("inspect --kernel no_such_kernel " + mma().dir);
  CHECK(none.exit_code == 2);
  CHECK_THAT(none.err, Catch::Contains("no_such_kernel"));
}

TEST_CASE("inspect: a cubin's SASS instruction mix, where nvdisasm is found", "[inspect][cuda]") {
  const std::string cubin = file_with(mma().dir, ".cubin");
  if (auto found = find_nvdisasm(); !found.ok()) {
    REQUIRE(found.error().code == ErrorCode::kNotFound);
    const json art = inspect(cubin)["artifacts"][0];
    CHECK(only_kernel(art)["instruction_mix"].is_null());
    CHECK_THAT(art["disassembly_error"].get<std::string>(), Catch::Contains("nvdisasm not found"));
    WARN("SKIPPED: " << found.error().message);
    return;
  }
  const json art = inspect(cubin)["artifacts"][0];
  CHECK(art["disassembly_error"].is_null());
  const json& mix = only_kernel(art)["instruction_mix"];
  REQUIRE(mix.is_object());
  const json& c = mix["categories"];
  CHECK(c["mma"].get<int>() >= 16);  // HMMA.16816: 2 x 4 tiles per warp, 2 k-steps of BK = 32
  CHECK(c["cp_async"].get<int>() > 0);
  CHECK(c["tma"] == 0);
  int sum = 0;
  for (const auto& n : c) sum += n.get<int>();
  CHECK(sum == mix["total"].get<int>());
  const json s = only_kernel(inspect(file_with(simt().dir, ".cubin"))["artifacts"][0]);
  CHECK(s["instruction_mix"]["categories"]["mma"] == 0);

  auto human = test::run_kforge("inspect " + cubin);
  REQUIRE(human.exit_code == 0);
  CHECK_THAT(human.out, Catch::Contains("instruction mix of gemm_mma_sync__" + std::string(kMmaConfig)));

  // An nvdisasm named explicitly that is not one is an error, not a silent gap.
  const test::ScopedEnv wrong("KFORGE_NVDISASM", mma().dir);
  auto bad = test::run_kforge("inspect " + cubin);
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.err, Catch::Contains("KFORGE_NVDISASM"));
}

TEST_CASE("inspect: gfx90a code object metadata and disassembled instruction mix", "[inspect][hip]") {
  const std::string co = file_with(hip().dir, ".co");
  const json art = inspect(co)["artifacts"][0];
  CHECK(art["kind"] == "amdgpu_code_object");
  CHECK(art["target"] == "gfx90a");
  const json& k = only_kernel(art);

  const std::string bytes = test::read_file(co);
  auto meta =
      read_amd_code_object(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
  REQUIRE(meta.ok());
  REQUIRE(meta->kernels.size() == 1);
  CHECK(k["vgprs"] == meta->kernels[0].vgpr_count);
  CHECK(k["sgprs"] == meta->kernels[0].sgpr_count);
  CHECK(k["lds_bytes"] == meta->kernels[0].lds_bytes);
  CHECK(k["wavefront_size"] == 64);
  CHECK(k["lds_bytes"] == hip().report["candidates"][0]["amdgpu"]["lds_bytes"]);

  const json& mix = k["instruction_mix"];
  CHECK(k["undecoded_bytes"] == 0);
  CHECK(mix["total"].get<int>() > 20);
  CHECK(mix["categories"]["lds_load"].get<int>() > 0);
  CHECK(mix["categories"]["lds_store"].get<int>() > 0);
  CHECK(mix["categories"]["global_load"].get<int>() > 0);
  CHECK(mix["categories"]["wait_barrier"].get<int>() > 0);
  CHECK(mix["categories"]["mfma"] == 0);
  // Every instruction of the kernel's byte range is decoded: 4- and 8-byte encodings.
  CHECK(mix["total"].get<int>() * 4 <= k["code_bytes"].get<int>());
  CHECK(mix["total"].get<int>() * 8 >= k["code_bytes"].get<int>());

  // The disassembler on its own: the same instructions; a processor LLVM 15
  // does not know is kUnsupported (inspect then keeps the metadata).
  auto image = read_elf_image(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
  REQUIRE(image.ok());
  auto fns = disassemble_amdgpu_functions(*image, meta->target);
  REQUIRE(fns.ok());
  REQUIRE(fns->size() == 1);
  CHECK((*fns)[0].symbol == k["name"]);
  CHECK(static_cast<int>((*fns)[0].instructions.size()) == mix["total"].get<int>());
  CHECK((*fns)[0].instructions.back().mnemonic == "s_endpgm");
  auto unknown = disassemble_amdgpu_functions(*image, "amdgcn-amd-amdhsa--gfx1999");
  REQUIRE(!unknown.ok());
  CHECK(unknown.error().code == ErrorCode::kUnsupported);
}

TEST_CASE("inspect: bad input gets a one-line error naming the file", "[inspect][cuda]") {
  test::TempDir tmp;
  const std::string text = tmp.file("notes.txt");
  test::write_file(text, "not a kernel\n");
  auto r = test::run_kforge("inspect " + text);
  CHECK(r.exit_code == 2);
  CHECK(r.err == "kforge: error: " + text +
                     ": not a compiled artifact (an AMDGPU code object, a CUDA cubin or PTX)\n");

  // A cubin cut in half: its section headers (at the end) are gone.
  const std::string cubin = test::read_file(file_with(simt().dir, ".cubin"));
  const std::string cut = tmp.file("cut.cubin");
  test::write_file(cut, cubin.substr(0, cubin.size() / 2));
  r = test::run_kforge("inspect " + cut);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("kforge: error: " + cut + ": ELF: "));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);

  // Only the ELF header left.
  test::write_file(cut, cubin.substr(0, 64));
  r = test::run_kforge("inspect " + cut);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains(cut));

  r = test::run_kforge("inspect " + tmp.file("missing.cubin"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("missing.cubin: no such file"));
}

TEST_CASE("inspect: a .nv.info record cut short is an error naming the section", "[inspect][cuda]") {
  const std::string bytes = test::read_file(file_with(simt().dir, ".cubin"));
  auto image = read_elf_image(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
  REQUIRE(image.ok());
  auto info = read_cubin_info(*image);
  REQUIRE(info.ok());
  CHECK(info->sm == 90);
  for (auto& s : image->sections) {
    if (s.name.rfind(".nv.info.", 0) == 0) s.bytes.resize(s.bytes.size() - 2);
  }
  auto cut = read_cubin_info(*image);
  REQUIRE(!cut.ok());
  CHECK_THAT(cut.error().message, Catch::StartsWith("cubin: .nv.info.gemm_simt_tiled__"));
}

TEST_CASE("inspect: PTX statements, labels, predicates and inline-asm scopes", "[inspect]") {
  const char* ptx = R"(
// comment .entry not_this
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(
  .param .u64 k_param_0
)
.maxntid 128, 1, 1
{
  .reg .b32 %r<4>;
  .shared .align 4 .b8 tile[64];
  ld.param.u64 %rd1, [k_param_0];
$L__BB0_1:
  @%p1 bra $L__BB0_2;
  { .reg .b32 t; mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r1,%r2}, {%f1,%f2,%f3,%f4}; }
  ld.shared::cta.u32 %r1, [tile]; /* ld.global.u32 in a comment */
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1,%r2,%r3,%r4}, [%r1];
  cp.async.cg.shared.global [%r1], [%rd1], 16;
  bar.sync 0;
$L__BB0_2: st.global.f32 [%rd1], %f1;
  ret;
}
)";
  REQUIRE(looks_like_ptx(ptx));
  auto m = parse_ptx(ptx);
  REQUIRE(m.ok());
  CHECK(m->target == "sm_80");
  REQUIRE(m->entries.size() == 1);
  const auto& e = m->entries[0];
  CHECK(e.name == "k");
  CHECK(e.maxntid == std::array<std::int64_t, 3>{128, 1, 1});
  CHECK(e.opcodes ==
        std::vector<std::string>{"ld.param.u64", "bra", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
                                 "ld.shared::cta.u32", "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
                                 "cp.async.cg.shared.global", "bar.sync", "st.global.f32", "ret"});
  const auto mix = tally_mix(Isa::kPtx, e.opcodes);
  CHECK(mix.total == 9);
  CHECK(mix.count("mma") == 1);
  CHECK(mix.count("ld_shared") == 1);
  CHECK(mix.count("ldmatrix") == 1);
  CHECK(mix.count("cp_async") == 1);
  CHECK(mix.count("barrier") == 1);
  CHECK(mix.count("st_global") == 1);
  CHECK(mix.count("branch") == 2);
  CHECK(mix.count("other") == 1);
  CHECK(!looks_like_ptx("int main() { return 0; }"));
  CHECK(!parse_ptx(".version 8.0\n.target sm_80\n.entry k() { ld.global.u32 %r1, [x];\n").ok());
}

TEST_CASE("inspect: PTX line information (.loc, no semicolon) hides no instruction", "[inspect]") {
  // As Triton and -lineinfo write it: every statement after a .loc line.
  const char* ptx = R"(
.version 8.4
.target sm_90a
.address_size 64
.file 1 "/tmp/kernel.py"
.visible .entry k(
  .param .u64 k_param_0
)
{
  .loc 1 12 0
  ld.param.u64 %rd1, [k_param_0];
$L__tmp0:
  .loc 1 14 22
  wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%f1}, %rd2, %rd3, 1, 1, 1, 0, 0;
$L__BB0_1:
  .loc 1 15 5
  @%p1 bra $L__BB0_1;
  .loc 1 16 1
  ret;
}
)";
  auto m = parse_ptx(ptx);
  REQUIRE(m.ok());
  REQUIRE(m->entries.size() == 1);
  CHECK(m->entries[0].opcodes ==
        std::vector<std::string>{"ld.param.u64", "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", "bra",
                                 "ret"});
  CHECK(tally_mix(Isa::kPtx, m->entries[0].opcodes).count("mma") == 1);
}

TEST_CASE("inspect: amdgcn mnemonic categories", "[inspect]") {
  CHECK(amdgcn_category("v_mfma_f32_32x32x8f16") == "mfma");
  CHECK(amdgcn_category("global_load_dwordx4") == "global_load");
  CHECK(amdgcn_category("global_store_dword") == "global_store");
  CHECK(amdgcn_category("ds_read_b128") == "lds_load");
  CHECK(amdgcn_category("ds_load_b32") == "lds_load");
  CHECK(amdgcn_category("ds_write2_b32") == "lds_store");
  CHECK(amdgcn_category("ds_bpermute_b32") == "lds_other");
  CHECK(amdgcn_category("buffer_load_dword") == "buffer_memory");
  CHECK(amdgcn_category("flat_load_dword") == "flat_memory");
  CHECK(amdgcn_category("scratch_store_dword") == "scratch_memory");
  CHECK(amdgcn_category("s_load_dwordx4") == "scalar_memory");
  CHECK(amdgcn_category("s_buffer_load_dword") == "scalar_memory");
  CHECK(amdgcn_category("s_waitcnt") == "wait_barrier");
  CHECK(amdgcn_category("s_barrier") == "wait_barrier");
  CHECK(amdgcn_category("s_cbranch_scc1") == "branch");
  CHECK(amdgcn_category("v_fmac_f32_e32") == "valu");
  CHECK(amdgcn_category("s_add_u32") == "salu");
  CHECK(amdgcn_category("exp") == "other");
}
