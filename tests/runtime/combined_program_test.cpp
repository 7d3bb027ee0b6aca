// Combined programs on OpenCL (PoCL): several gemm_simt_tiled instances built
// as one program compute, bit for bit, what each computes built alone; a
// member's binary holds its own kernel only; a bad member fails the build.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "generator/gemm_operator.hpp"
#include "generator/instance.hpp"
#include "generator/program_combiner.hpp"
#include "tests/runtime/coverage_runner.hpp"

using namespace kforge;

namespace {

const TemplateSource& gemm_template() { return test::builtin_template("gemm_simt_tiled"); }
Device& device() { return test::coverage_device(); }

// Awkward on purpose: every tile has a tail, and the bias+gelu epilogue
// brings the prelude's activation code in.
Problem problem() {
  Problem p;
  p.op = "gemm";
  p.dims = {{"M", 37}, {"N", 45}, {"K", 19}, {"batch", 2}};
  p.layout = Layout{false, true};
  p.epilogue.bias = true;
  p.epilogue.activation = Activation::kGelu;
  return p;
}

Instance instance(const std::string& config) {
  auto cfg = Config::parse(config);
  REQUIRE(cfg.ok());
  auto inst = instantiate(gemm_template(), prelude_text("opencl"), GemmOperator{}, *cfg, problem(),
                          device().info().limits());
  if (!inst.ok()) FAIL(inst.error().message);
  return std::move(inst).value();
}

/// The output of `compiled` on the accumulate workload (seed 7).
std::vector<std::uint8_t> run(const CompiledKernel& compiled, const Instance& inst) {
  Device& dev = device();
  const GemmOperator op;
  Workload w = op.make_workload(problem(), 7, WorkloadKind::kAccumulate);
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::vector<KernelArg> args;
  const std::string failed = test::upload(dev, w, buffers, args);
  REQUIRE(failed.empty());
  auto kernel = dev.load(compiled);
  if (!kernel.ok()) FAIL(kernel.error().message);
  auto launched = dev.launch(**kernel, args, inst.geometry);
  if (!launched.ok()) FAIL(launched.error().message);
  HostTensor& out = w.tensors[w.output];
  REQUIRE(dev.read(*buffers[w.output], out.bytes.data(), out.bytes.size()).ok());
  return out.bytes;
}

}  // namespace

TEST_CASE("gemm instances built as one program compute what each computes alone", "[opencl][combine]") {
  Compiler& compiler = device().compiler();
  REQUIRE(compiler.combines_programs());
  std::vector<Instance> insts;
  for (const char* c : {"BK8_BM32_BN32_PAD0_TM2_TN2_VW1", "BK16_BM64_BN32_PAD1_TM4_TN2_VW2",
                        "BK16_BM32_BN64_PAD0_TM2_TN4_VW2"}) {
    insts.push_back(instance(c));
  }
  std::vector<const Instance*> ptrs;
  for (const auto& i : insts) ptrs.push_back(&i);
  auto source = combine_instances(gemm_template(), prelude_text("opencl"), ptrs);
  REQUIRE(source.ok());
  auto combined = compiler.compile_combined(*source, ptrs, "");
  if (!combined.ok()) FAIL(combined.error().message + "\n" + combined.error().context);
  REQUIRE(combined->size() == insts.size());

  for (std::size_t i = 0; i < insts.size(); ++i) {
    INFO(insts[i].config_name);
    const CompiledKernel& member = (*combined)[i];
    CHECK(member.kernel_name == insts[i].kernel_name);
    CHECK(member.program == (*combined)[0].program);  // one program
    CHECK(member.resources.local_mem_bytes == insts[i].local_memory_bytes);
    auto own = compiler.compile(insts[i].source, insts[i].kernel_name, "");
    REQUIRE(own.ok());
    const auto expected = run(*own, insts[i]);
    CHECK(run(member, insts[i]) == expected);

    // Its binary is its own program's: it loads in a fresh build of it and
    // computes the same, and holds no other member's kernel.
    auto binary = member.fetch_binary();
    REQUIRE(binary.ok());
    CompiledKernel stored;
    stored.kernel_name = member.kernel_name;
    stored.options = member.options;
    stored.binary = *binary;
    CHECK(run(stored, insts[i]) == expected);
    stored.kernel_name = insts[(i + 1) % insts.size()].kernel_name;
    CHECK_FALSE(device().load(stored).ok());
  }
}

TEST_CASE("a combined program with a member that does not compile fails as a whole, with its log",
          "[opencl][combine]") {
  Instance good = instance("BK8_BM32_BN32_PAD0_TM2_TN2_VW1");
  Instance bad = instance("BK16_BM64_BN32_PAD1_TM4_TN2_VW2");
  // The template as someone broke it for one configuration.
  bad.source += "\n#if BM == 64\nthis does not compile;\n#endif\n";
  auto source = combine_instances(gemm_template(), prelude_text("opencl"), {&good, &bad});
  REQUIRE(source.ok());
  auto combined = device().compiler().compile_combined(*source, {&good, &bad}, "");
  REQUIRE_FALSE(combined.ok());
  CHECK(combined.error().code == ErrorCode::kCompile);
  CHECK_THAT(combined.error().context, Catch::Contains("error"));
  // Alone, the good one builds.
  CHECK(device().compiler().compile(good.source, good.kernel_name, "").ok());
}
