// One ...LtMatmul per launch, between the device's timing events, for
// cuBLASLt and hipBLASLt alike (Lib: the vendor's traits). The descriptors,
// the algorithm and its workspace are made at bind time for the bound
// problem; a launch sets only the pointers.
#include "runtime/libraries/blaslt_gemm.hpp"

#include <algorithm>
#include <vector>

#include "runtime/libraries/blaslt_objects.hpp"
#include "runtime/libraries/cublaslt_traits.hpp"
#include "runtime/libraries/hipblaslt_traits.hpp"
#include "runtime/libraries/library_kernel.hpp"

namespace kforge {

namespace {

constexpr int kHeuristicCount = 16;
/// The most workspace an algorithm may ask for; 32 MiB is what cuBLAS itself
/// reserves on Hopper.
constexpr std::size_t kMaxWorkspace = std::size_t{32} << 20;

/// "cublasLtMatmul" from "Matmul".
template <class Lib>
std::string entry(const char* what) {
  return std::string(Lib::kPrefix) + what;
}

template <class Lib>
int data_type(Dtype d) {
  switch (d) {
    case Dtype::kF16:
      return Lib::kR16F;
    case Dtype::kBF16:
      return Lib::kR16BF;
    default:
      break;
  }
  return Lib::kR32F;
}

template <class Lib>
Result<BlasLtShape> blaslt_shape(const Problem& p) {
  BlasLtShape s;
  s.g = ColumnMajorGemm::of(p);
  s.op_a = s.g.trans_a ? Lib::kOpT : Lib::kOpN;
  s.op_b = s.g.trans_b ? Lib::kOpT : Lib::kOpN;
  s.in_type = data_type<Lib>(p.dtype);
  KF_TRY(Lib::set_epilogue(p, s));
  return s;
}

template <class Lib>
Result<typename Lib::MatrixLayout> make_layout(const typename Lib::Api& api, int type, std::uint64_t rows,
                                               std::uint64_t cols, std::int64_t ld, std::int32_t batch,
                                               std::int64_t stride) {
  typename Lib::MatrixLayout l = nullptr;
  KF_TRY(blaslt_check<Lib>(api, api.matrix_layout_create(&l, type, rows, cols, ld),
                           entry<Lib>("MatrixLayoutCreate")));
  if (batch > 1) {
    auto st = api.matrix_layout_set_attribute(l, Lib::kLayoutBatchCount, &batch, sizeof batch);
    if (st == Lib::kSuccess)
      st = api.matrix_layout_set_attribute(l, Lib::kLayoutStridedBatchOffset, &stride, sizeof stride);
    if (st != Lib::kSuccess) {
      api.matrix_layout_destroy(l);
      return blaslt_error<Lib>(api, entry<Lib>("MatrixLayoutSetAttribute (batch)"), st,
                               ErrorCode::kUnsupported);
    }
  }
  return l;
}

template <class Lib>
Status make_objects(BlasLtObjects<Lib>& o, const BlasLtShape& s) {
  const typename Lib::Api& api = o.api;
  KF_TRY(blaslt_check<Lib>(api, api.create(&o.handle), entry<Lib>("Create")));
  KF_TRY(blaslt_check<Lib>(api, api.matmul_desc_create(&o.op, Lib::kCompute32F, Lib::kR32F),
                           entry<Lib>("MatmulDescCreate")));
  KF_TRY(blaslt_check<Lib>(api, api.matmul_desc_set_attribute(o.op, Lib::kDescTransA, &s.op_a, sizeof s.op_a),
                           "TRANSA"));
  KF_TRY(blaslt_check<Lib>(api, api.matmul_desc_set_attribute(o.op, Lib::kDescTransB, &s.op_b, sizeof s.op_b),
                           "TRANSB"));
  if constexpr (Lib::kEpilogue) {
    KF_TRY(blaslt_check<Lib>(
        api, api.matmul_desc_set_attribute(o.op, Lib::kDescEpilogue, &s.epilogue, sizeof s.epilogue),
        "EPILOGUE"));
  }
  const ColumnMajorGemm& g = s.g;
  KF_TRY_ASSIGN(a, make_layout<Lib>(api, s.in_type, g.a_rows, g.a_cols, g.lda, g.batch, g.a_stride));
  o.a = a;
  KF_TRY_ASSIGN(b, make_layout<Lib>(api, s.in_type, g.b_rows, g.b_cols, g.ldb, g.batch, g.b_stride));
  o.b = b;
  KF_TRY_ASSIGN(c, make_layout<Lib>(api, Lib::kR32F, g.m, g.n, g.ldc, g.batch, g.c_stride));
  o.c = c;
  return ok_status();
}

template <class Lib>
Result<std::vector<typename Lib::HeuristicResult>> heuristic(const BlasLtObjects<Lib>& o) {
  const typename Lib::Api& api = o.api;
  typename Lib::Preference pref = nullptr;
  KF_TRY(blaslt_check<Lib>(api, api.preference_create(&pref), entry<Lib>("MatmulPreferenceCreate")));
  const std::uint64_t max_ws = kMaxWorkspace;
  auto st = api.preference_set_attribute(pref, Lib::kPrefMaxWorkspaceBytes, &max_ws, sizeof max_ws);
  std::vector<typename Lib::HeuristicResult> results(kHeuristicCount);
  int returned = 0;
  if (st == Lib::kSuccess)
    st = api.algo_get_heuristic(o.handle, o.op, o.a, o.b, o.c, o.c, pref, kHeuristicCount, results.data(),
                                &returned);
  api.preference_destroy(pref);
  if (st != Lib::kSuccess)
    return blaslt_error<Lib>(api, entry<Lib>("MatmulAlgoGetHeuristic"), st, ErrorCode::kUnsupported);
  results.resize(static_cast<std::size_t>(std::max(returned, 0)));
  return results;
}

/// M N K alpha A B beta C bias (GemmOperator::arguments), as device addresses.
struct BlasLtArgs {
  std::int32_t m = 0, n = 0, k = 0;
  float alpha = 0, beta = 0;
  void *a = nullptr, *b = nullptr, *c = nullptr, *bias = nullptr;
};

/// The arguments, the bias only where the library binds an epilogue.
template <class Lib>
Result<BlasLtArgs> blaslt_args(const std::vector<KernelArg>& args, const std::string& name) {
  using K = KernelArg::Kind;
  if (args.size() != 9 || args[0].kind != K::kInt32 || args[1].kind != K::kInt32 ||
      args[2].kind != K::kInt32 || args[3].kind != K::kFloat32 || args[6].kind != K::kFloat32)
    return Error::bad_input(name + ": expected gemm's arguments M N K alpha A B beta C bias");
  BlasLtArgs g{args[0].i32, args[1].i32, args[2].i32, args[3].f32, args[6].f32};
  void** out[] = {&g.a, &g.b, &g.c, &g.bias};
  const std::size_t at[] = {4, 5, 7, 8};
  for (std::size_t i = 0; i < (Lib::kEpilogue ? 4u : 3u); ++i) {
    if (args[at[i]].kind != K::kBuffer || !args[at[i]].buffer)
      return Error::bad_input(name + ": argument " + std::to_string(at[i]) + " is not a buffer");
    KF_TRY_ASSIGN(address, Lib::address(*args[at[i]].buffer));
    *out[i] = address;
  }
  return g;
}

template <class Lib>
class BlasLtGemm final : public LibraryKernel {
 public:
  BlasLtGemm(Device& device, std::unique_ptr<BlasLtObjects<Lib>> objects, const Problem& problem,
             BlasLtShape shape, std::string name)
      : device_(device), o_(std::move(objects)), problem_(problem), shape_(shape), name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  nlohmann::json call_identity() const override { return identity_; }

  /// ALGO 16 (`algo` null), or `algo` with `workspace` bytes (allocated here).
  Status choose(const typename Lib::Algo* algo, std::size_t workspace, nlohmann::json identity) {
    has_algo_ = algo != nullptr;
    if (algo) algo_ = *algo;
    workspace_bytes_ = workspace;
    if (workspace_bytes_ > 0) {
      KF_TRY_ASSIGN(ws, device_.allocate(workspace_bytes_));
      workspace_ = std::move(ws);
    }
    identity["workspace_bytes"] = workspace_bytes_;
    identity_ = std::move(identity);
    return ok_status();
  }

  Result<double> run(const std::vector<KernelArg>& args, const LaunchGeometry& geometry,
                     const OnRunning& on_running) override {
    if (on_running) on_running();  // nothing is built at a call
    KF_TRY_ASSIGN(call, bind_call(args, geometry));
    return Lib::timed_call(device_, call);
  }

  Status enqueue(const std::vector<KernelArg>& args, const LaunchGeometry& geometry) override {
    KF_TRY_ASSIGN(call, bind_call(args, geometry));
    return Lib::enqueued_call(device_, call);
  }

 private:
  Result<std::function<Status(void*)>> bind_call(const std::vector<KernelArg>& args,
                                                 const LaunchGeometry& geometry);
  Status set_bias(void* bias);

  Device& device_;
  std::unique_ptr<BlasLtObjects<Lib>> o_;
  Problem problem_;
  BlasLtShape shape_;
  std::string name_;
  bool has_algo_ = false;
  typename Lib::Algo algo_{};
  std::size_t workspace_bytes_ = 0;
  std::unique_ptr<Buffer> workspace_;
  nlohmann::json identity_;
};

/// The matmul of `args`, checked against the bound problem, to run on a stream.
template <class Lib>
Result<std::function<Status(void*)>> BlasLtGemm<Lib>::bind_call(const std::vector<KernelArg>& args,
                                                                const LaunchGeometry& geometry) {
  KF_TRY_ASSIGN(g, blaslt_args<Lib>(args, name_));
  if (g.m != problem_.dim("M") || g.n != problem_.dim("N") || g.k != problem_.dim("K") ||
      geometry.grid[2] != shape_.g.batch)
    return Error::bad_input(name_ + ": bound for " + problem_.key() +
                            ", called with M=" + std::to_string(g.m) + " N=" + std::to_string(g.n) +
                            " K=" + std::to_string(g.k) + " batch=" + std::to_string(geometry.grid[2]));
  if (shape_.bias) KF_TRY(set_bias(g.bias));
  void* ws = nullptr;
  if (workspace_) {
    KF_TRY_ASSIGN(address, Lib::address(*workspace_));
    ws = address;
  }
  return std::function<Status(void*)>([this, g, ws](void* stream) -> Status {
    const typename Lib::Api& api = o_->api;
    // kforge's B is the library's A; C is read (beta) and written in place.
    const auto st = api.matmul(o_->handle, o_->op, &g.alpha, g.b, o_->a, g.a, o_->b, &g.beta, g.c, o_->c, g.c,
                               o_->c, has_algo_ ? &algo_ : nullptr, ws, workspace_bytes_, stream);
    if (st != Lib::kSuccess)
      return blaslt_error<Lib>(api, name_ + ": " + entry<Lib>("Matmul"), st, ErrorCode::kLaunch);
    return ok_status();
  });
}

/// The bias epilogue's pointer, this call's bias buffer.
template <class Lib>
Status BlasLtGemm<Lib>::set_bias(void* bias) {
  if constexpr (Lib::kEpilogue) {
    const typename Lib::Api& api = o_->api;
    if (auto st = api.matmul_desc_set_attribute(o_->op, Lib::kDescBiasPointer, &bias, sizeof bias);
        st != Lib::kSuccess)
      return blaslt_error<Lib>(api, name_ + ": BIAS_POINTER", st, ErrorCode::kLaunch);
  }
  return ok_status();
}

/// The stored algorithm where one replays, else the heuristic's `index`-th.
template <class Lib>
Status choose_algo(BlasLtGemm<Lib>& gemm, const BlasLtObjects<Lib>& o, const BlasLtShape& s, int index,
                   const nlohmann::json& stored) {
  nlohmann::json identity = {{"library", Lib::kName}, {"algo_index", index}};
  std::string refused;
  auto replayed = Lib::replay(o, s, stored);
  if (replayed.ok() && *replayed) {
    identity["algo"] = stored["algo"];
    identity["replayed"] = true;
    return gemm.choose(&(*replayed)->algo, (*replayed)->workspace, std::move(identity));
  }
  if (!replayed.ok()) refused = replayed.error().message;
  KF_TRY_ASSIGN(results, heuristic(o));
  if (static_cast<std::size_t>(index) >= results.size())
    return Error{ErrorCode::kUnsupported,
                 std::string(Lib::kName) + ": the heuristic offers " + std::to_string(results.size()) +
                     " algorithms for this problem; ALGO " + std::to_string(index) + " is past them",
                 {}};
  const typename Lib::HeuristicResult& r = results[static_cast<std::size_t>(index)];
  identity["algo"] = Lib::algo_json(o.api, r.algo);
  identity["waves"] = r.waves_count;
  if (!refused.empty()) identity["replay_refused"] = refused;
  return gemm.choose(&r.algo, r.workspace_size, std::move(identity));
}

int algo_index(const Config& config) {
  auto it = config.values.find("ALGO");
  return it == config.values.end() ? kBlasLtDefaultAlgo : static_cast<int>(it->second);
}

}  // namespace

template <class Lib>
Result<std::unique_ptr<Kernel>> bind_blaslt_gemm(Device& device, const Problem& problem, const Config& config,
                                                 const std::string& name, const nlohmann::json& stored) {
  if (!is_backend(device.info().backend, Lib::kBackend))
    return Error{
        ErrorCode::kUnsupported,
        std::string(Lib::kName) + ": " + device.info().name + " is not a " + Lib::kDevice + " device",
        {}};
  KF_TRY_ASSIGN(shape, blaslt_shape<Lib>(problem));
  const auto& api = Lib::load();
  if (!api.ok()) return Error{ErrorCode::kUnsupported, "unavailable: " + api.error().message, {}};
  KF_TRY(Lib::make_current(device));
  auto objects = std::make_unique<BlasLtObjects<Lib>>(**api);
  KF_TRY(make_objects(*objects, shape));
  const BlasLtObjects<Lib>& o = *objects;
  auto gemm = std::make_unique<BlasLtGemm<Lib>>(device, std::move(objects), problem, shape, name);
  const int index = algo_index(config);
  if (index == kBlasLtDefaultAlgo) {
    KF_TRY(gemm->choose(nullptr, kMaxWorkspace,
                        {{"library", Lib::kName}, {"algo_index", index}, {"algo", "default"}}));
  } else {
    KF_TRY(choose_algo(*gemm, o, shape, index, stored));
  }
  return std::unique_ptr<Kernel>(std::move(gemm));
}

template Result<std::unique_ptr<Kernel>> bind_blaslt_gemm<CublasLt>(Device&, const Problem&, const Config&,
                                                                    const std::string&,
                                                                    const nlohmann::json&);
template Result<std::unique_ptr<Kernel>> bind_blaslt_gemm<HipblasLt>(Device&, const Problem&, const Config&,
                                                                     const std::string&,
                                                                     const nlohmann::json&);

}  // namespace kforge
