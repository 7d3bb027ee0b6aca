// Built-in and user templates.
#include "runtime/catalog/template_catalog.hpp"

#include <algorithm>

#include "generator/declared_operator.hpp"
#include "runtime/libraries/library_candidates.hpp"
#include "runtime/libraries/library_reference.hpp"
#include "templates/builtin_templates.hpp"

namespace kforge {

Result<TemplateCatalog> TemplateCatalog::builtin() {
  TemplateCatalog c;
  KF_TRY_ASSIGN(tpls, builtin_templates());
  c.templates_ = std::move(tpls);
  for (TemplateSource& t : c.templates_) resolve_library(t);
  return c;
}

namespace {

/// A reference template loads, implements the operator and declares its
/// configuration: checked when the directory is loaded, so that a mistake is
/// bad input before anything runs.
Status check_reference_template(const std::string& declaration, const ReferenceSpec& reference) {
  if (reference.kind != ReferenceSpec::Kind::kTemplate) return ok_status();
  auto tpl = TemplateSource::load_dir(reference.template_dir);
  if (!tpl.ok()) return Error::bad_input(declaration + ": reference.template: " + tpl.error().message);
  Status declared = tpl->manifest.check_declared_name(reference.config);
  if (!declared.ok())
    return Error::bad_input(declaration + ": reference.config: " + declared.error().message);
  // Its outputs are double where the device has it: a kernel that stores
  // float would be read as garbage, so it must say kf_ref_t.
  if (tpl->kernel_text.find("kf_ref_t") == std::string::npos) {
    return Error::bad_input(declaration + ": reference.template: " + tpl->manifest.name + " (" +
                            reference.template_dir +
                            ") never names kf_ref_t: a reference template stores its "
                            "outputs as kf_ref_t (double where the device has f64, else float)");
  }
  return ok_status();
}

/// Registers the operator DIR/operator.json declares, when there is one, so
/// that the manifest beside it can name it.
Status register_declared_operator(const std::string& dir) {
  KF_TRY_ASSIGN(declaration, OperatorDeclaration::load_dir(dir));
  if (!declaration) return ok_status();
  std::shared_ptr<const ExternalReference> external;
  if (declaration->reference.kind == ReferenceSpec::Kind::kLibrary) {
    KF_TRY_ASSIGN(lib, LibraryReference::open(declaration->reference.library, declaration->reference.symbol,
                                              declaration->path));
    external = std::move(lib);
  }
  const std::string identity = declaration->canonical, origin = declaration->path;
  const ReferenceSpec reference = declaration->reference;
  KF_TRY_ASSIGN(op, DeclaredOperator::create(std::move(*declaration), std::move(external)));
  KF_TRY(register_operator(std::move(op), identity, origin));
  return check_reference_template(origin, reference);
}

}  // namespace

Status TemplateCatalog::add_dir(const std::string& dir) {
  KF_TRY(register_declared_operator(dir));
  KF_TRY_ASSIGN(tpl, TemplateSource::load_dir(dir));
  resolve_library(tpl);
  std::erase_if(templates_, [&](const TemplateSource& t) { return t.manifest.name == tpl.manifest.name; });
  templates_.push_back(std::move(tpl));
  dirs_.push_back(dir);
  return ok_status();
}

std::vector<const TemplateSource*> TemplateCatalog::for_op(std::string_view op,
                                                           std::string_view backend) const {
  std::vector<const TemplateSource*> out;
  for (const auto& t : templates_) {
    if (t.manifest.op == op && t.manifest.supports_target(backend)) out.push_back(&t);
  }
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->manifest.name < b->manifest.name; });
  return out;
}

const TemplateSource* TemplateCatalog::find(std::string_view name) const {
  for (const auto& t : templates_) {
    if (t.manifest.name == name) return &t;
  }
  return nullptr;
}

}  // namespace kforge
