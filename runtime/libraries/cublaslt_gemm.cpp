// One cublasLtMatmul per launch, between the CUDA device's timing events.
// The descriptors, the algorithm and its workspace are made at bind time for
// the bound problem; a launch sets only the pointers.
#include "runtime/libraries/cublaslt_gemm.hpp"

#include <cstring>

#include "generator/backend_traits.hpp"
#include "runtime/device/cuda/cuda_backend.hpp"
#include "runtime/libraries/column_major_gemm.hpp"
#include "runtime/libraries/cublaslt_api.hpp"
#include "runtime/libraries/library_kernel.hpp"

namespace kforge {

namespace {

namespace lt = cublaslt;

constexpr int kHeuristicCount = 16;
/// The most workspace an algorithm may ask for; 32 MiB is what cuBLAS itself
/// reserves on Hopper.
constexpr std::size_t kMaxWorkspace = std::size_t{32} << 20;

Error lt_error(const lt::Api& api, const std::string& what, lt::StatusCode st,
               ErrorCode code = ErrorCode::kLaunch) {
  return Error{code, what + " returned " + lt::status_text(api, st), {}};
}

int data_type(Dtype d) {
  switch (d) {
    case Dtype::kF16:
      return lt::kR16F;
    case Dtype::kBF16:
      return lt::kR16BF;
    default:
      break;
  }
  return lt::kR32F;
}

/// cuBLASLt's column-major view of the problem, its types and epilogue.
struct LtShape {
  ColumnMajorGemm g;
  int op_a = lt::kOpN, op_b = lt::kOpN;
  int in_type = lt::kR32F;
  std::uint32_t epilogue = lt::kEpilogueDefault;
};

Result<LtShape> lt_shape(const Problem& p) {
  LtShape s;
  s.g = ColumnMajorGemm::of(p);
  s.op_a = s.g.trans_a ? lt::kOpT : lt::kOpN;
  s.op_b = s.g.trans_b ? lt::kOpT : lt::kOpN;
  s.in_type = data_type(p.dtype);
  // kforge's bias[j] runs along C's columns: the rows of cuBLASLt's C^T,
  // which is what its bias epilogue adds, after alpha and beta as kforge does.
  const bool relu = p.epilogue.activation == Activation::kRelu;
  if (p.epilogue.activation != Activation::kNone && !relu)
    return Error{ErrorCode::kUnsupported,
                 "cublaslt: no epilogue computes " + std::string(activation_name(p.epilogue.activation)) +
                     " as kforge defines it",
                 {}};
  s.epilogue = p.epilogue.bias ? (relu ? lt::kEpilogueReluBias : lt::kEpilogueBias)
                               : (relu ? lt::kEpilogueRelu : lt::kEpilogueDefault);
  return s;
}

/// The handle and descriptors of one bound problem, destroyed with it.
struct LtObjects {
  const lt::Api& api;
  lt::Handle handle = nullptr;
  lt::MatmulDesc op = nullptr;
  lt::MatrixLayout a = nullptr, b = nullptr, c = nullptr;
  explicit LtObjects(const lt::Api& loaded) : api(loaded) {}
  LtObjects(const LtObjects&) = delete;
  LtObjects& operator=(const LtObjects&) = delete;
  ~LtObjects() {
    for (lt::MatrixLayout l : {a, b, c})
      if (l) api.matrix_layout_destroy(l);
    if (op) api.matmul_desc_destroy(op);
    if (handle) api.destroy(handle);
  }
};

Status check(const lt::Api& api, lt::StatusCode st, const char* what) {
  return st == lt::kSuccess ? ok_status() : Status(lt_error(api, what, st, ErrorCode::kUnsupported));
}

Result<lt::MatrixLayout> make_layout(const lt::Api& api, int type, std::uint64_t rows, std::uint64_t cols,
                                     std::int64_t ld, std::int32_t batch, std::int64_t stride) {
  lt::MatrixLayout l = nullptr;
  KF_TRY(check(api, api.matrix_layout_create(&l, type, rows, cols, ld), "cublasLtMatrixLayoutCreate"));
  if (batch > 1) {
    lt::StatusCode st = api.matrix_layout_set_attribute(l, lt::kLayoutBatchCount, &batch, sizeof batch);
    if (st == lt::kSuccess)
      st = api.matrix_layout_set_attribute(l, lt::kLayoutStridedBatchOffset, &stride, sizeof stride);
    if (st != lt::kSuccess) {
      api.matrix_layout_destroy(l);
      return lt_error(api, "cublasLtMatrixLayoutSetAttribute (batch)", st, ErrorCode::kUnsupported);
    }
  }
  return l;
}

Status make_objects(LtObjects& o, const LtShape& s) {
  const lt::Api& api = o.api;
  KF_TRY(check(api, api.create(&o.handle), "cublasLtCreate"));
  KF_TRY(check(api, api.matmul_desc_create(&o.op, lt::kCompute32F, lt::kR32F), "cublasLtMatmulDescCreate"));
  KF_TRY(check(api, api.matmul_desc_set_attribute(o.op, lt::kDescTransA, &s.op_a, sizeof s.op_a), "TRANSA"));
  KF_TRY(check(api, api.matmul_desc_set_attribute(o.op, lt::kDescTransB, &s.op_b, sizeof s.op_b), "TRANSB"));
  KF_TRY(check(api, api.matmul_desc_set_attribute(o.op, lt::kDescEpilogue, &s.epilogue, sizeof s.epilogue),
               "EPILOGUE"));
  const ColumnMajorGemm& g = s.g;
  KF_TRY_ASSIGN(a, make_layout(api, s.in_type, g.a_rows, g.a_cols, g.lda, g.batch, g.a_stride));
  o.a = a;
  KF_TRY_ASSIGN(b, make_layout(api, s.in_type, g.b_rows, g.b_cols, g.ldb, g.batch, g.b_stride));
  o.b = b;
  KF_TRY_ASSIGN(c, make_layout(api, lt::kR32F, g.m, g.n, g.ldc, g.batch, g.c_stride));
  o.c = c;
  return ok_status();
}

Result<std::vector<lt::HeuristicResult>> heuristic(const LtObjects& o) {
  const lt::Api& api = o.api;
  lt::Preference pref = nullptr;
  KF_TRY(check(api, api.preference_create(&pref), "cublasLtMatmulPreferenceCreate"));
  const std::uint64_t max_ws = kMaxWorkspace;
  lt::StatusCode st = api.preference_set_attribute(pref, lt::kPrefMaxWorkspaceBytes, &max_ws, sizeof max_ws);
  std::vector<lt::HeuristicResult> results(kHeuristicCount);
  int returned = 0;
  if (st == lt::kSuccess)
    st = api.algo_get_heuristic(o.handle, o.op, o.a, o.b, o.c, o.c, pref, kHeuristicCount, results.data(),
                                &returned);
  api.preference_destroy(pref);
  if (st != lt::kSuccess) return lt_error(api, "cublasLtMatmulAlgoGetHeuristic", st, ErrorCode::kUnsupported);
  results.resize(static_cast<std::size_t>(std::max(returned, 0)));
  return results;
}

/// An algorithm's configuration fields as stored (cublaslt::algo_fields()).
nlohmann::json algo_json(const lt::Api& api, const lt::Algo& algo) {
  nlohmann::json j = nlohmann::json::object();
  for (const lt::AlgoField& f : lt::algo_fields()) {
    std::uint32_t v32 = 0;
    std::uint16_t v16 = 0;
    void* buf = f.bytes == 2 ? static_cast<void*>(&v16) : static_cast<void*>(&v32);
    std::size_t written = 0;
    if (api.algo_config_get_attribute(&algo, f.attribute, buf, f.bytes, &written) != lt::kSuccess) continue;
    j[f.name] = f.bytes == 2 ? std::int64_t{v16} : std::int64_t{static_cast<std::int32_t>(v32)};
  }
  return j;
}

/// Rebuilds a stored algorithm and checks it for the bound problem.
Result<lt::HeuristicResult> replay(const LtObjects& o, const LtShape& s, const nlohmann::json& fields) {
  const lt::Api& api = o.api;
  if (!fields.is_object() || !fields.contains("id") || !fields["id"].is_number_integer())
    return Error::bad_input("cublaslt: the stored algorithm has no integer id: " + fields.dump());
  lt::HeuristicResult r{};
  KF_TRY(check(api,
               api.algo_init(o.handle, lt::kCompute32F, lt::kR32F, s.in_type, s.in_type, lt::kR32F, lt::kR32F,
                             fields["id"].get<int>(), &r.algo),
               "cublasLtMatmulAlgoInit"));
  for (const lt::AlgoField& f : lt::algo_fields()) {
    if (f.attribute == lt::kConfigId || !fields.contains(f.name) || !fields[f.name].is_number_integer())
      continue;
    const auto value = fields[f.name].get<std::int64_t>();
    const auto v32 = static_cast<std::uint32_t>(value);
    const auto v16 = static_cast<std::uint16_t>(value);
    const void* buf = f.bytes == 2 ? static_cast<const void*>(&v16) : static_cast<const void*>(&v32);
    KF_TRY(check(api, api.algo_config_set_attribute(&r.algo, f.attribute, buf, f.bytes),
                 "cublasLtMatmulAlgoConfigSetAttribute"));
  }
  KF_TRY(
      check(api, api.algo_check(o.handle, o.op, o.a, o.b, o.c, o.c, &r.algo, &r), "cublasLtMatmulAlgoCheck"));
  return r;
}

/// M N K alpha A B beta C bias (GemmOperator::arguments), as device addresses.
struct LtArgs {
  std::int32_t m = 0, n = 0, k = 0;
  float alpha = 0, beta = 0;
  std::uint64_t a = 0, b = 0, c = 0, bias = 0;
};

Result<LtArgs> lt_args(const std::vector<KernelArg>& args, const std::string& name) {
  using K = KernelArg::Kind;
  if (args.size() != 9 || args[0].kind != K::kInt32 || args[1].kind != K::kInt32 ||
      args[2].kind != K::kInt32 || args[3].kind != K::kFloat32 || args[6].kind != K::kFloat32)
    return Error::bad_input(name + ": expected gemm's arguments M N K alpha A B beta C bias");
  LtArgs g{args[0].i32, args[1].i32, args[2].i32, args[3].f32, args[6].f32};
  std::uint64_t* out[] = {&g.a, &g.b, &g.c, &g.bias};
  const std::size_t at[] = {4, 5, 7, 8};
  for (std::size_t i = 0; i < 4; ++i) {
    if (args[at[i]].kind != K::kBuffer || !args[at[i]].buffer)
      return Error::bad_input(name + ": argument " + std::to_string(at[i]) + " is not a buffer");
    KF_TRY_ASSIGN(address, cuda_buffer_address(*args[at[i]].buffer));
    *out[i] = address;
  }
  return g;
}

void* as_ptr(std::uint64_t address) {
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(address));
}

class CublasLtGemm final : public LibraryKernel {
 public:
  CublasLtGemm(Device& device, std::unique_ptr<LtObjects> objects, const Problem& problem, LtShape shape,
               std::string name)
      : device_(device), o_(std::move(objects)), problem_(problem), shape_(shape), name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  nlohmann::json call_identity() const override { return identity_; }

  /// ALGO 16, or `chosen` with the workspace it needs (allocated here).
  Status choose(const lt::HeuristicResult* chosen, nlohmann::json identity) {
    has_algo_ = chosen != nullptr;
    if (chosen) algo_ = chosen->algo;
    workspace_bytes_ = chosen ? chosen->workspace_size : kMaxWorkspace;
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
    return cuda_timed_call(device_, call);
  }

  Status enqueue(const std::vector<KernelArg>& args, const LaunchGeometry& geometry) override {
    KF_TRY_ASSIGN(call, bind_call(args, geometry));
    return cuda_enqueued_call(device_, call);
  }

 private:
  /// The cublasLtMatmul of `args`, checked against the bound problem, to run on a stream.
  Result<std::function<Status(void*)>> bind_call(const std::vector<KernelArg>& args,
                                                 const LaunchGeometry& geometry) {
    KF_TRY_ASSIGN(g, lt_args(args, name_));
    if (g.m != problem_.dim("M") || g.n != problem_.dim("N") || g.k != problem_.dim("K") ||
        geometry.grid[2] != shape_.g.batch)
      return Error::bad_input(name_ + ": bound for " + problem_.key() +
                              ", called with M=" + std::to_string(g.m) + " N=" + std::to_string(g.n) +
                              " K=" + std::to_string(g.k) + " batch=" + std::to_string(geometry.grid[2]));
    const lt::Api& api = o_->api;
    if (shape_.epilogue == lt::kEpilogueBias || shape_.epilogue == lt::kEpilogueReluBias) {
      void* bias = as_ptr(g.bias);
      if (lt::StatusCode st = api.matmul_desc_set_attribute(o_->op, lt::kDescBiasPointer, &bias, sizeof bias);
          st != lt::kSuccess)
        return lt_error(api, name_ + ": BIAS_POINTER", st);
    }
    KF_TRY_ASSIGN(ws, workspace_address());
    return std::function<Status(void*)>([this, g, ws](void* stream) -> Status {
      const lt::Api& lt_api = o_->api;
      // kforge's B is cuBLASLt's A; C is read (beta) and written in place.
      const lt::StatusCode st = lt_api.matmul(
          o_->handle, o_->op, &g.alpha, as_ptr(g.b), o_->a, as_ptr(g.a), o_->b, &g.beta, as_ptr(g.c), o_->c,
          as_ptr(g.c), o_->c, has_algo_ ? &algo_ : nullptr, as_ptr(ws), workspace_bytes_, stream);
      if (st != lt::kSuccess) return lt_error(lt_api, name_ + ": cublasLtMatmul", st);
      return ok_status();
    });
  }

  Result<std::uint64_t> workspace_address() const {
    if (!workspace_) return std::uint64_t{0};
    return cuda_buffer_address(*workspace_);
  }

  Device& device_;
  std::unique_ptr<LtObjects> o_;
  Problem problem_;
  LtShape shape_;
  std::string name_;
  bool has_algo_ = false;
  lt::Algo algo_{};
  std::size_t workspace_bytes_ = 0;
  std::unique_ptr<Buffer> workspace_;
  nlohmann::json identity_;
};

int algo_index(const Config& config) {
  auto it = config.values.find("ALGO");
  return it == config.values.end() ? kCublasLtDefaultAlgo : static_cast<int>(it->second);
}

/// The stored algorithm where one replays, else the heuristic's `index`-th.
Status choose_algo(CublasLtGemm& gemm, const LtObjects& o, const LtShape& s, int index,
                   const nlohmann::json& stored) {
  nlohmann::json identity = {{"library", "cublaslt"}, {"algo_index", index}};
  std::string refused;
  if (stored.is_object() && stored.contains("algo") && stored["algo"].is_object()) {
    auto replayed = replay(o, s, stored["algo"]);
    if (replayed.ok()) {
      identity["algo"] = stored["algo"];
      identity["replayed"] = true;
      return gemm.choose(&*replayed, std::move(identity));
    }
    refused = replayed.error().message;
  }
  KF_TRY_ASSIGN(results, heuristic(o));
  if (static_cast<std::size_t>(index) >= results.size())
    return Error{ErrorCode::kUnsupported,
                 "cublaslt: the heuristic offers " + std::to_string(results.size()) +
                     " algorithms for this problem; ALGO " + std::to_string(index) + " is past them",
                 {}};
  const lt::HeuristicResult& r = results[static_cast<std::size_t>(index)];
  identity["algo"] = algo_json(o.api, r.algo);
  identity["waves"] = r.waves_count;
  if (!refused.empty()) identity["replay_refused"] = refused;
  return gemm.choose(&r, std::move(identity));
}

}  // namespace

Result<std::unique_ptr<Kernel>> bind_cublaslt_gemm(Device& device, const Problem& problem,
                                                   const Config& config, const std::string& name,
                                                   const nlohmann::json& stored) {
  if (!is_backend(device.info().backend, BackendId::kCuda))
    return Error{ErrorCode::kUnsupported, "cublaslt: " + device.info().name + " is not a CUDA device", {}};
  const auto& api = cublaslt::load();
  if (!api.ok()) return Error{ErrorCode::kUnsupported, "unavailable: " + api.error().message, {}};
  KF_TRY_ASSIGN(shape, lt_shape(problem));
  KF_TRY(cuda_make_current(device));
  auto objects = std::make_unique<LtObjects>(**api);
  KF_TRY(make_objects(*objects, shape));
  const LtObjects& o = *objects;
  auto gemm = std::make_unique<CublasLtGemm>(device, std::move(objects), problem, shape, name);
  const int index = algo_index(config);
  if (index == kCublasLtDefaultAlgo) {
    KF_TRY(gemm->choose(nullptr, {{"library", "cublaslt"}, {"algo_index", index}, {"algo", "default"}}));
  } else {
    KF_TRY(choose_algo(*gemm, o, shape, index, stored));
  }
  return std::unique_ptr<Kernel>(std::move(gemm));
}

}  // namespace kforge
