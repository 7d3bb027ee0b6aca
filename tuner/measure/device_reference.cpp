// Running a reference template: loaded and checked like any template, one
// configuration compiled, launched twice per workload on its own buffers.
#include "tuner/measure/device_reference.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "generator/backend_traits.hpp"
#include "generator/instance.hpp"
#include "generator/template_source.hpp"
#include "generator/workload_builder.hpp"
#include "templates/builtin_templates.hpp"

namespace kforge {

namespace {

/// `w`'s tensors as the reference template sees them: inputs as they are,
/// outputs widened to kf_ref_t, a poisoned one NaN whatever its dtype.
std::vector<HostTensor> reference_tensors(const DeclaredOperator& op, const Workload& w, Dtype ref_dtype) {
  std::vector<HostTensor> out = w.tensors;
  const auto& declared = op.declaration().arguments;
  for (std::size_t i = 0; i < declared.size() && i < w.args.size(); ++i) {
    if (!declared[i].is_output()) continue;
    const HostTensor& given = w.tensors.at(w.args[i].tensor);
    HostTensor& wide = out[w.args[i].tensor];
    wide.dtype = ref_dtype;
    wide.bytes.assign(given.elements() * dtype_bytes(ref_dtype), 0);
    for (std::size_t k = 0; k < given.elements(); ++k)
      store_value(wide, k,
                  declared[i].poison ? std::numeric_limits<double>::quiet_NaN() : load_value(given, k));
  }
  return out;
}

/// One launch on fresh copies of `w`'s tensors; every output read back, in order.
Result<std::vector<double>> run_once(Device& device, Kernel& kernel, const LaunchGeometry& geometry,
                                     const DeclaredOperator& op, const Workload& w, Dtype ref_dtype) {
  std::vector<HostTensor> tensors = reference_tensors(op, w, ref_dtype);
  std::vector<std::unique_ptr<Buffer>> buffers;
  for (const auto& t : tensors) {
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
    HostTensor& out = tensors[t];
    KF_TRY(device.read(*buffers[t], out.bytes.data(), out.bytes.size()));
    for (std::size_t k = 0; k < out.elements(); ++k) values.push_back(load_value(out, k));
  }
  return values;
}

}  // namespace

Dtype reference_dtype(const DeviceInfo& info) {
  return info.fp64 ? Dtype::kF64 : Dtype::kF32;
}

std::string reference_prelude(const DeviceInfo& info) {
  std::string s = "/* A reference template computes and stores its outputs in kf_ref_t. */\n";
  if (!info.fp64) return s + "#define KF_REF_F64 0\ntypedef float kf_ref_t;\n";
  if (is_backend(info.backend, BackendId::kOpenCL)) s += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  return s + "#define KF_REF_F64 1\ntypedef double kf_ref_t;\n";
}

std::string describe_reference(const DeclaredOperator& op, const DeviceInfo& info) {
  std::string s = op.reference_description();
  if (op.declaration().reference.kind != ReferenceSpec::Kind::kTemplate) return s;
  return s + (info.fp64 ? ", computed in f64 on the device"
                        : ", computed in f32 on the device (it has no f64; tolerances as declared)");
}

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
  const std::string prelude = reference_prelude(info) + std::string(prelude_text(info.backend));
  auto inst = instantiate(*tpl, prelude, op, *cfg, p, info.limits());
  if (!inst.ok()) return Error::bad_input(field + inst.error().message);
  auto compiled = device.compiler().compile(inst->source, inst->kernel_name, "");
  if (!compiled.ok()) return Error::bad_input(field + "does not compile: " + compiled.error().message);
  KF_TRY_ASSIGN(kernel, device.load(*compiled));
  const std::string who = "reference (" + describe_reference(op, info) + ") for " + p.key();
  std::vector<Reference> out;
  for (const Workload* w : ws) {
    KF_TRY_ASSIGN(first, run_once(device, *kernel, inst->geometry, op, *w, reference_dtype(info)));
    KF_TRY_ASSIGN(second, run_once(device, *kernel, inst->geometry, op, *w, reference_dtype(info)));
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
