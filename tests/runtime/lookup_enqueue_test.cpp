// Production launches through the lookup: enqueued without events or a
// wait (Device::enqueue), checked first like a timed launch, and their
// results seen by the next read.
#include <optional>
#include <tuple>

#include "tests/forwarding_device.hpp"
#include "tests/runtime/lookup_fixtures.hpp"

using namespace kforge;
using namespace kforge::test;

namespace {

/// Counts the timed and the enqueued launches that reach the device.
class CountingDevice final : public ForwardingDevice {
 public:
  using ForwardingDevice::ForwardingDevice;
  int timed = 0, enqueued = 0, synchronized = 0;
  Result<double> launch(Kernel& k, const std::vector<KernelArg>& args, const LaunchGeometry& g,
                        const OnRunning& on_running = {}) override {
    ++timed;
    return inner_.launch(k, args, g, on_running);
  }
  Status enqueue(Kernel& k, const std::vector<KernelArg>& args, const LaunchGeometry& g) override {
    ++enqueued;
    return inner_.enqueue(k, args, g);
  }
  Status synchronize() override {
    ++synchronized;
    return inner_.synchronize();
  }
};

/// A gemm's buffers, written with the workload's data, and its arguments.
struct GemmLaunch {
  Workload w;
  Reference ref;
  std::vector<std::unique_ptr<Buffer>> bufs;
  std::vector<KernelArg> args;
  GemmLaunch(Device& device, const Problem& p) {
    GemmOperator op;
    w = op.make_workload(p, 11, WorkloadKind::kPoisonedOutput);
    ref = op.reference(p, w);
    for (const auto& t : w.tensors) {
      bufs.push_back(std::move(device.allocate(t.bytes.size()).value()));
      REQUIRE(device.write(*bufs.back(), t.bytes.data(), t.bytes.size()).ok());
    }
    for (const auto& a : w.args) {
      if (a.kind == OperatorArg::Kind::kTensor) args.push_back(KernelArg::of(*bufs[a.tensor]));
      else if (a.kind == OperatorArg::Kind::kInt32) args.push_back(KernelArg::of(a.i32));
      else args.push_back(KernelArg::of(a.f32));
    }
  }
  void check_output(Device& device) {
    std::vector<float> c(w.tensors[w.output].elements());
    REQUIRE(device.read(*bufs[w.output], c.data(), c.size() * 4).ok());
    for (std::size_t i = 0; i < c.size(); ++i) {
      INFO("index " << i);
      REQUIRE(std::fabs(c[i] - ref.value[i]) <= ref.tolerance * ref.scale[i]);
    }
  }
};

/// PoCL behind a CountingDevice, a lookup with no database, the default
/// selection for `problem` and its buffers.
struct EnqueueSetup {
  TempDir dir;
  std::unique_ptr<Device> opened = std::move(open_device("auto").value());
  CountingDevice device{*opened};
  Warnings w;
  std::unique_ptr<Lookup> lookup = open_lookup(w.options(dir.file("none.db")), device, catalog_with({}));
  Selection sel;
  std::optional<GemmLaunch> run;
  explicit EnqueueSetup(const Problem& problem) : sel(select_ok(*lookup, problem)) {
    run.emplace(device, sel.problem);
  }
  std::tuple<CountingDevice&, std::unique_ptr<Lookup>&, Selection&, GemmLaunch&> parts() {
    return {device, lookup, sel, *run};
  }
};

}  // namespace

TEST_CASE("a lookup's enqueue launches without a timed wait and the read sees the result",
          "[lookup][opencl][launch]") {
  EnqueueSetup on(gemm(96, 80, 48));
  auto [device, lookup, sel, run] = on.parts();
  for (int i = 0; i < 5; ++i) REQUIRE(lookup->enqueue(sel, run.args).ok());
  CHECK(device.enqueued == 5);
  CHECK(device.timed == 0);
  CHECK(device.synchronized == 0);
  run.check_output(device);
  REQUIRE(lookup->synchronize().ok());
  CHECK(device.synchronized == 1);

  // The timed launch stays a measurement of its own.
  auto ms = lookup->launch(sel, run.args);
  REQUIRE(ms.ok());
  CHECK(*ms >= 0);
  CHECK(device.timed == 1);
}

TEST_CASE("an enqueue is checked against the operator's arguments and enqueues nothing on a mismatch",
          "[lookup][opencl][launch]") {
  EnqueueSetup on(gemm(64, 32, 16));
  auto [device, lookup, sel, run] = on.parts();
  std::vector<KernelArg> short_list(run.args.begin(), run.args.end() - 1);
  auto refused = lookup->enqueue(sel, short_list);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == ErrorCode::kBadInput);
  CHECK_THAT(refused.error().message, Catch::StartsWith("gemm launch: 8 arguments given, gemm takes 9"));
  CHECK(device.enqueued == 0);

  auto named = lookup->enqueue_named(sel, {{"M", run.args[0]}});
  REQUIRE_FALSE(named.ok());
  CHECK(named.error().code == ErrorCode::kBadInput);
  CHECK(device.enqueued == 0);
}
