// Kind `source`: the instance's source compiled by the device's compiler
// (OpenCL, NVRTC, hipRTC or the offline HIP compiler), then loaded.
#include "runtime/kinds/template_kind.hpp"

#include "runtime/kinds/kernel_signature.hpp"

namespace kforge {
namespace {

class SourceKind final : public TemplateKind {
 public:
  TemplateKindId id() const override { return TemplateKindId::kSource; }
  std::string unavailable(const TemplateSource&) const override { return {}; }
  bool compiles() const override { return true; }

  /// The device's own: NVRTC, hipRTC or the OpenCL driver's.
  Compiler* compiler(Device& device) const override { return &device.compiler(); }

  Result<CompiledKernel> compile(Device& device, const TemplateSource&, const Instance& inst) const override {
    // No options: the tuner's binaries are the lookup's cache hits.
    return compiler(device)->compile(inst.source, inst.kernel_name, "");
  }

  Result<KernelBuild> build(const BuildInput& input, BinarySource& binaries) const override {
    KernelBuild out;
    const BinarySource::Compile compile_it = [&] { return compile(input.device, input.tpl, input.inst); };
    KF_TRY_ASSIGN(binary, binaries.obtain(input, compile_it, out));
    KF_TRY(binaries.admit(input, binary));
    auto kernel = input.device.load(binary);
    if (!kernel.ok() && out.cache_hit) {
      KF_TRY_ASSIGN(fresh, binaries.replace_refused(input, compile_it, kernel.error(), out));
      binary = std::move(fresh);
      kernel = input.device.load(binary);
    }
    if (!kernel.ok()) return kernel.error();
    if (const Operator* op = find_operator(input.problem.op)) {
      KF_TRY(check_signature(**kernel, op->arguments(input.problem)));
    }
    out.kernel = std::move(*kernel);
    out.binary = std::move(binary);
    return out;
  }
};

}  // namespace

const TemplateKind& source_kind() {
  static const SourceKind kind;
  return kind;
}

}  // namespace kforge
