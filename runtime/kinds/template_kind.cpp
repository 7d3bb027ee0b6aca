// The defaults of BinarySource and TemplateKind, and the kinds by id.
#include "runtime/kinds/template_kind.hpp"

#include "runtime/kinds/binary_cache.hpp"

namespace kforge {

Result<CompiledKernel> BinarySource::replace_refused(const BuildInput&, const Compile&, const Error& refused,
                                                     KernelBuild&) {
  return refused;
}

Status BinarySource::admit(const BuildInput&, const CompiledKernel&) { return ok_status(); }

Result<CompiledKernel> CompileAlways::obtain(const BuildInput&, const Compile& compile, KernelBuild& out) {
  out.origin = KernelOrigin::kCompiled;
  out.cache_hit = false;
  return compile();
}

Compiler* TemplateKind::compiler(Device&) const { return nullptr; }

Result<CompiledKernel> TemplateKind::compile(Device&, const TemplateSource& tpl, const Instance&) const {
  return Error{ErrorCode::kUnsupported,
               "template '" + tpl.manifest.name + "' (kind " + std::string(name()) + ") has no compile step",
               {}};
}

void TemplateKind::add_identity(Hasher&, const BuildInput&) const {}

void TemplateKind::key_compiler(BinaryCacheKey&) const {}

const TemplateKind& template_kind(TemplateKindId id) {
  switch (id) {
    case TemplateKindId::kSource: return source_kind();
    case TemplateKindId::kLibrary: return library_kind();
    case TemplateKindId::kTriton: return triton_kind();
  }
  return source_kind();
}

const TemplateKind& template_kind(const TemplateSource& tpl) { return template_kind(tpl.manifest.kind); }

}  // namespace kforge
