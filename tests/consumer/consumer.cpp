// A C++ program using the installed kforge package: select a GEMM kernel,
// launch it on its own data and check the answer. Exit 0 when correct.
#include <kforge/runtime/device/device_registry.hpp>
#include <kforge/generator/gemm_operator.hpp>
#include <kforge/runtime/lookup/lookup.hpp>

#include <cmath>
#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  using namespace kforge;
  auto device = open_device("auto");
  if (!device.ok()) return std::fprintf(stderr, "%s\n", device.error().message.c_str()), 1;
  LookupOptions options;
  options.user_db = argc > 1 ? argv[1] : "";
  auto lookup = Lookup::open(options, **device, TemplateCatalog::builtin().value());
  if (!lookup.ok()) return std::fprintf(stderr, "%s\n", lookup.error().message.c_str()), 1;
  const Problem problem{"gemm", {{"M", 40}, {"N", 24}, {"K", 16}}, Dtype::kF32, Layout{}};
  auto sel = (*lookup)->select_ref(problem);
  if (!sel.ok()) return std::fprintf(stderr, "%s\n", sel.error().message.c_str()), 1;
  const std::string rule(name((*sel)->rule));
  std::printf("cpp: %s %s %s\n", rule.c_str(), (*sel)->template_name.c_str(), (*sel)->config.c_str());

  GemmOperator gemm;
  Workload w = gemm.make_workload((*sel)->problem, 3, WorkloadKind::kPoisonedOutput);
  Reference ref = gemm.reference((*sel)->problem, w);
  std::vector<std::unique_ptr<Buffer>> bufs;
  std::vector<KernelArg> args;
  for (const auto& t : w.tensors) {
    bufs.push_back(std::move((*device)->allocate(t.bytes.size()).value()));
    if (!(*device)->write(*bufs.back(), t.bytes.data(), t.bytes.size()).ok()) return 1;
  }
  for (const auto& a : w.args) {
    if (a.kind == OperatorArg::Kind::kTensor) args.push_back(KernelArg::of(*bufs[a.tensor]));
    else if (a.kind == OperatorArg::Kind::kInt32) args.push_back(KernelArg::of(a.i32));
    else args.push_back(KernelArg::of(a.f32));
  }
  auto ms = (*lookup)->launch(**sel, args);
  if (!ms.ok()) return std::fprintf(stderr, "%s\n", ms.error().message.c_str()), 1;
  std::vector<float> c(w.tensors[w.output].elements());
  if (!(*device)->read(*bufs[w.output], c.data(), c.size() * sizeof(float)).ok()) return 1;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < c.size(); ++i) bad += !(std::fabs(c[i] - ref.value[i]) <= ref.tolerance * ref.scale[i]);
  std::printf("cpp: %zu of %zu elements outside tolerance\n", bad, c.size());
  return bad == 0 ? 0 : 1;
}
