// Runs one template configuration on PoCL over many problems: compiles each
// (configuration, problem type) once and reuses it across shapes, validates
// with tuner/validator against the operator's reference, and on a mismatch
// returns the one-line report the tuner writes (template, configuration,
// problem, dtype, layout, first bad index, value, reference, error,
// threshold, rerun command).
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "generator/instance.hpp"
#include "runtime/device/device_registry.hpp"
#include "templates/builtin_templates.hpp"
#include "tuner/measure/validator.hpp"
#include "tuner/tuner.hpp"

namespace kforge::test {

inline Device& coverage_device() {
  static std::unique_ptr<Device> dev = [] {
    auto d = open_device("opencl:0");
    REQUIRE(d.ok());
    return std::move(d).value();
  }();
  return *dev;
}

inline const TemplateSource& builtin_template(const std::string& name) {
  static const std::vector<TemplateSource> all = [] {
    auto t = builtin_templates();
    REQUIRE(t.ok());
    return std::move(t).value();
  }();
  for (const auto& t : all) {
    if (t.manifest.name == name) return t;
  }
  FAIL(name << " is not among the built-in templates");
  return all.front();
}

/// Uploads `w`'s tensors to `dev` (into `buffers`, in order) and gives the
/// kernel arguments that name them; "" or what failed.
inline std::string upload(Device& dev, const Workload& w, std::vector<std::unique_ptr<Buffer>>& buffers,
                          std::vector<KernelArg>& args) {
  for (const auto& t : w.tensors) {
    auto b = dev.allocate(std::max<std::size_t>(t.bytes.size(), 4));
    if (!b.ok()) return "allocate: " + b.error().message;
    if (auto s = dev.write(**b, t.bytes.data(), t.bytes.size()); !s.ok()) return "write: " + s.error().message;
    buffers.push_back(std::move(b).value());
  }
  for (const auto& a : w.args) {
    switch (a.kind) {
      case OperatorArg::Kind::kTensor: args.push_back(KernelArg::of(*buffers[a.tensor])); break;
      case OperatorArg::Kind::kInt32: args.push_back(KernelArg::of(a.i32)); break;
      case OperatorArg::Kind::kFloat32: args.push_back(KernelArg::of(a.f32)); break;
    }
  }
  return {};
}

/// Compiles the template's kernel file alone after the OpenCL prelude (its
/// in-file defaults, no generator defines); "" or the compiler's message.
inline std::string compiles_alone(const std::string& template_name) {
  const TemplateSource& tpl = builtin_template(template_name);
  const std::string source = std::string(prelude_text("opencl")) + "\n" + tpl.kernel_text;
  auto compiled = coverage_device().compiler().compile(source, tpl.manifest.kernel, "");
  return compiled.ok() ? "" : compiled.error().message + "\n" + compiled.error().context;
}

class CoverageRunner {
 public:
  CoverageRunner(const std::string& template_name, const std::string& config)
      : tpl_(builtin_template(template_name)), config_(*Config::parse(config)) {}
  /// Runs a template that is not built in (e.g. one broken on purpose); `tpl`
  /// must outlive the runner.
  CoverageRunner(const TemplateSource& tpl, const std::string& config)
      : tpl_(tpl), config_(*Config::parse(config)) {}

  /// Runs `p` on the operator's workload of `kind` (edited by `edit` first,
  /// e.g. to plant NaN); "" when every element passes, else the report line.
  std::string run(const Problem& p, WorkloadKind kind, std::uint64_t seed = 7,
                  const std::function<void(Workload&)>& edit = {}) {
    last_validation_ = {};
    const Operator* op = find_operator(p.op);
    REQUIRE(op != nullptr);
    auto problem = op->normalize(p);
    REQUIRE(problem.ok());
    Device& dev = coverage_device();
    auto inst = instantiate(tpl_, prelude_text("opencl"), *op, config_, *problem, dev.info().limits());
    if (!inst.ok()) return "instantiate: " + inst.error().message;
    const std::string body = inst->source.substr(inst->source.find('\n') + 1);
    auto it = kernels_.find(body);
    if (it == kernels_.end()) {
      auto compiled = dev.compiler().compile(inst->source, inst->kernel_name, "");
      if (!compiled.ok()) return "compile: " + compiled.error().message + "\n" + compiled.error().context;
      auto loaded = dev.load(*compiled);
      if (!loaded.ok()) return "load: " + loaded.error().message;
      it = kernels_.emplace(body, std::move(loaded).value()).first;
    }
    Workload w = op->make_workload(*problem, seed, kind);
    if (edit) edit(w);
    const Reference ref = op->reference(*problem, w);
    std::vector<std::unique_ptr<Buffer>> buffers;
    std::vector<KernelArg> args;
    if (std::string failed = upload(dev, w, buffers, args); !failed.empty()) return failed;
    // Twice: scratch left by the first launch (counters) must serve the second.
    // The output is restored in between: it may also be an input (gemm's beta C).
    for (int launch = 0; launch < 2; ++launch) {
      if (launch == 1) {
        const HostTensor& o = w.tensors[w.output];
        if (auto s = dev.write(*buffers[w.output], o.bytes.data(), o.bytes.size()); !s.ok()) {
          return "write: " + s.error().message;
        }
      }
      auto ms = dev.launch(*it->second, args, inst->geometry);
      if (!ms.ok()) return "launch: " + ms.error().message;
    }
    HostTensor& out = w.tensors[w.output];
    if (auto s = dev.read(*buffers[w.output], out.bytes.data(), out.bytes.size()); !s.ok()) {
      return "read: " + s.error().message;
    }
    last_output_.assign(out.f32(), out.f32() + out.elements());
    last_reference_ = ref.value;
    // Elements whose reference is NaN (NaN inputs that propagate) must be NaN;
    // the rest go through the validator.
    Reference checked = ref;
    std::vector<float> got = last_output_;
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (std::isnan(ref.value[i])) {
        if (!std::isnan(got[i])) {
          return "template " + tpl_.manifest.name + " config " + config_.canonical_name() + " problem " +
                 problem->key() + ": index " + std::to_string(i) + " should be NaN (NaN propagates), got " +
                 std::to_string(got[i]);
        }
        checked.value[i] = 0.0;
        checked.scale[i] = 0.0;
        got[i] = 0.0f;
      }
    }
    const ValidationResult v = validate_output(got.data(), got.size(), checked);
    last_validation_ = v;
    if (v.passed) return {};
    return describe_failure(tpl_.manifest.name, config_.canonical_name(), *problem,
                            kind == WorkloadKind::kPoisonedOutput ? "first run" : "second run", v);
  }

  const std::vector<float>& last_output() const { return last_output_; }
  /// The last run's validation (error_norm, error_ratio); reset by every run.
  const ValidationResult& last_validation() const { return last_validation_; }

 private:
  const TemplateSource& tpl_;
  Config config_;
  std::map<std::string, std::unique_ptr<Kernel>> kernels_;
  std::vector<float> last_output_;
  std::vector<double> last_reference_;
  ValidationResult last_validation_;
};

}  // namespace kforge::test
