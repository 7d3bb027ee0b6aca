// Running a reference template: loaded and checked like any template, one
// configuration compiled, launched twice per workload on its own buffers.
#include "device_reference.hpp"

#include <cmath>
#include <cstring>
#include <memory>

#include "builtin_templates.hpp"
#include "instance.hpp"
#include "template_source.hpp"

namespace kforge {

namespace {

/// One launch on fresh copies of `w`'s tensors; every output read back, in order.
Result<std::vector<double>> run_once(Device& device, Kernel& kernel, const LaunchGeometry& geometry,
                                     const Workload& w) {
  std::vector<std::unique_ptr<Buffer>> buffers;
  for (const auto& t : w.tensors) {
    KF_TRY_ASSIGN(buf, device.allocate(std::max<std::size_t>(t.bytes.size(), 4)));
    KF_TRY(device.write(*buf, t.bytes.data(), t.bytes.size()));
    buffers.push_back(std::move(buf));
  }
  std::vector<KernelArg> args;
  for (const auto& a : w.args) {
    switch (a.kind) {
      case OperatorArg::Kind::kTensor:
        args.push_back(KernelArg::of(*buffers[a.tensor]));
        break;
      case OperatorArg::Kind::kInt32:
        args.push_back(KernelArg::of(a.i32));
        break;
      case OperatorArg::Kind::kFloat32:
        args.push_back(KernelArg::of(a.f32));
        break;
    }
  }
  KF_TRY(device.launch(kernel, args, geometry));
  std::vector<double> values;
  for (std::size_t t : output_tensors(w)) {
    std::vector<float> out(w.tensors[t].elements());
    KF_TRY(device.read(*buffers[t], out.data(), out.size() * sizeof(float)));
    values.insert(values.end(), out.begin(), out.end());
  }
  return values;
}

}  // namespace

Result<std::vector<Reference>> device_references(Device& device, const DeclaredOperator& op, const Problem& p,
                                                 const std::vector<const Workload*>& ws) {
  const OperatorDeclaration& d = op.declaration();
  const std::string field = d.path + ": reference.template: ";
  auto tpl = TemplateSource::load_dir(d.reference.template_dir);
  if (!tpl.ok()) return Error::bad_input(field + tpl.error().message);
  if (tpl->manifest.op != d.name) {
    return Error::bad_input(field + tpl->manifest.name + " implements '" + tpl->manifest.op + "', not '" +
                            d.name + "'");
  }
  auto cfg = Config::parse(d.reference.config);
  Status declared = cfg.ok() ? tpl->manifest.check_declared(*cfg) : Status(cfg.error());
  if (!declared.ok()) return Error::bad_input(d.path + ": reference.config: " + declared.error().message);
  const DeviceInfo& info = device.info();
  auto inst = instantiate(*tpl, prelude_text(info.backend), op, *cfg, p, info.limits());
  if (!inst.ok()) return Error::bad_input(field + inst.error().message);
  auto compiled = device.compiler().compile(inst->source, inst->kernel_name, "");
  if (!compiled.ok()) return Error::bad_input(field + "does not compile: " + compiled.error().message);
  KF_TRY_ASSIGN(kernel, device.load(*compiled));
  const std::string who = "reference (" + op.reference_description() + ") for " + p.key();
  std::vector<Reference> out;
  for (const Workload* w : ws) {
    KF_TRY_ASSIGN(first, run_once(device, *kernel, inst->geometry, *w));
    KF_TRY_ASSIGN(second, run_once(device, *kernel, inst->geometry, *w));
    for (std::size_t i = 0; i < first.size(); ++i) {
      if (std::memcmp(&first[i], &second[i], sizeof(double)) != 0 &&
          !(std::isnan(first[i]) && std::isnan(second[i]))) {
        return Error::bad_input(who + ": output element " + std::to_string(i) + " disagrees with itself (" +
                                std::to_string(first[i]) + " then " + std::to_string(second[i]) + ")");
      }
      if (std::isnan(first[i]))
        return Error::bad_input(who + ": output element " + std::to_string(i) + " is NaN");
    }
    KF_TRY_ASSIGN(ref, op.reference_from(p, std::move(first)));
    out.push_back(std::move(ref));
  }
  return out;
}

}  // namespace kforge
