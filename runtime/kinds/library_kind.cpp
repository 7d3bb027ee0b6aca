// Kind `library`: a vendor library call (CLBlast, cuBLASLt, hipBLASLt) bound
// in place of a compiled kernel. The library builds what it runs at its
// first call, made here; there is no binary to compile ahead or keep.
#include "runtime/kinds/template_kind.hpp"
#include "runtime/libraries/library_candidates.hpp"
#include "runtime/libraries/library_kernel.hpp"

namespace kforge {
namespace {

class LibraryKind final : public TemplateKind {
 public:
  TemplateKindId id() const override { return TemplateKindId::kLibrary; }
  std::string unavailable(const TemplateSource& tpl) const override { return tpl.library_unavailable; }
  bool compiles() const override { return false; }

  Result<KernelBuild> build(const BuildInput& input, BinarySource&) const override {
    KF_TRY_ASSIGN(call, bind_library_call(input.device, input.tpl, input.inst, input.problem, input.config,
                                          input.stored_call));
    KernelBuild out;
    out.origin = KernelOrigin::kLibrary;
    if (const auto* library_call = dynamic_cast<const LibraryKernel*>(call.get()))
      out.library_call = library_call->call_identity();
    out.kernel = std::move(call);
    return out;
  }

  /// A library call is bound for its problem, and for the choice stored with it.
  void add_identity(Hasher& h, const BuildInput& input) const override {
    h.add(input.tpl.library_identity).add(input.problem.key());
    if (!input.stored_call.is_null()) h.add(input.stored_call.dump());
  }
};

}  // namespace

const TemplateKind& library_kind() {
  static const LibraryKind kind;
  return kind;
}

}  // namespace kforge
