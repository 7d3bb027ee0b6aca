// Example: a program that asks the kforge runtime for the best GEMM kernel on
// this machine, launches it on its own buffers and checks the answer.
//   kforge_example_gemm [DB] [M N K]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "generator/gemm_operator.hpp"
#include "runtime/device/device_registry.hpp"
#include "runtime/lookup/lookup.hpp"

using namespace kforge;

int main(int argc, char** argv) {
  const std::string db_path = argc > 1 ? argv[1] : "kforge.db";
  const int M = argc > 4 ? std::atoi(argv[2]) : 250;
  const int N = argc > 4 ? std::atoi(argv[3]) : 260;
  const int K = argc > 4 ? std::atoi(argv[4]) : 256;

  auto device = open_device("auto");
  if (!device.ok()) return std::fprintf(stderr, "%s\n", device.error().message.c_str()), 1;
  auto catalog = TemplateCatalog::builtin();
  auto lookup = Lookup::open(db_path, **device, std::move(*catalog));
  if (!lookup.ok()) return std::fprintf(stderr, "%s\n", lookup.error().message.c_str()), 1;

  Problem problem{"gemm", {{"M", M}, {"N", N}, {"K", K}}, Dtype::kF32, Layout{}, {}, {}};
  auto sel = (*lookup)->select(problem);
  if (!sel.ok()) return std::fprintf(stderr, "%s\n", sel.error().message.c_str()), 1;
  const std::string rule(name(sel->rule));
  std::printf("%s: %s %s\n%s", rule.c_str(), sel->template_name.c_str(), sel->config.c_str(),
              sel->explanation.c_str());

  // The program's own data: C = 1.0 * A * B + 0.0 * C.
  GemmOperator gemm;
  Workload w = gemm.make_workload(sel->problem, 42, WorkloadKind::kPoisonedOutput);
  Reference ref = gemm.reference(sel->problem, w);
  std::vector<std::unique_ptr<Buffer>> bufs;
  std::vector<KernelArg> args;
  for (const auto& t : w.tensors) {
    bufs.push_back(std::move((*device)->allocate(t.bytes.size()).value()));
    (void)(*device)->write(*bufs.back(), t.bytes.data(), t.bytes.size()).value();
  }
  for (const auto& a : w.args) {
    if (a.kind == OperatorArg::Kind::kTensor) args.push_back(KernelArg::of(*bufs[a.tensor]));
    else if (a.kind == OperatorArg::Kind::kInt32) args.push_back(KernelArg::of(a.i32));
    else args.push_back(KernelArg::of(a.f32));
  }
  // Enqueued, not waited for (as a CUDA launch); the read below waits for it.
  auto queued = (*lookup)->enqueue(*sel, args);
  if (!queued.ok()) return std::fprintf(stderr, "%s\n", queued.error().message.c_str()), 1;

  std::vector<float> c(w.tensors[w.output].elements());
  (void)(*device)->read(*bufs[w.output], c.data(), c.size() * sizeof(float)).value();
  std::size_t bad = 0;
  double worst = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const double err = std::fabs(c[i] - ref.value[i]);
    const double thr = ref.tolerance * ref.scale[i];
    if (!(err <= thr)) ++bad;
    if (thr > 0) worst = std::max(worst, err / thr);
  }
  std::printf("M=%d N=%d K=%d: %zu of %zu elements outside tolerance (worst error/threshold %.3g)\n", M, N, K,
              bad, c.size(), worst);
  return bad == 0 ? 0 : 1;
}
