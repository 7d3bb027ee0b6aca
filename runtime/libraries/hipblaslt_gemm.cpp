// One hipblasLtMatmul per launch, between the HIP device's timing events.
// The descriptors, the algorithm and its workspace are made at bind time.
#include "runtime/libraries/hipblaslt_gemm.hpp"

#include <cstdio>
#include <cstring>

#include "generator/backend_traits.hpp"
#include "runtime/device/hip/hip_backend.hpp"
#include "runtime/libraries/column_major_gemm.hpp"
#include "runtime/libraries/hipblaslt_api.hpp"
#include "runtime/libraries/library_kernel.hpp"

namespace kforge {

namespace {

namespace hl = hipblaslt;

constexpr int kHeuristicCount = 16;
constexpr int kDefaultAlgo = 16;
constexpr std::size_t kMaxWorkspace = std::size_t{32} << 20;

Error hl_error(const std::string& what, hl::StatusCode st, ErrorCode code = ErrorCode::kUnsupported) {
  return Error{code, what + " returned hipblasStatus_t " + std::to_string(st), {}};
}

Status check(hl::StatusCode st, const char* what) {
  return st == hl::kSuccess ? ok_status() : Status(hl_error(what, st));
}

int data_type(Dtype d) {
  switch (d) {
    case Dtype::kF16:
      return hl::kR16F;
    case Dtype::kBF16:
      return hl::kR16BF;
    default:
      break;
  }
  return hl::kR32F;
}

std::string hex(const std::uint8_t* bytes, std::size_t n) {
  std::string out;
  char buf[3];
  for (std::size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", bytes[i]);
    out += buf;
  }
  return out;
}

bool unhex(const std::string& text, std::uint8_t* bytes, std::size_t n) {
  if (text.size() != 2 * n) return false;
  for (std::size_t i = 0; i < n; ++i) {
    unsigned v = 0;
    if (std::sscanf(text.c_str() + 2 * i, "%2x", &v) != 1) return false;
    bytes[i] = static_cast<std::uint8_t>(v);
  }
  return true;
}

/// The handle and descriptors of one bound problem, destroyed with it.
struct HlObjects {
  const hl::Api& api;
  hl::Handle handle = nullptr;
  hl::MatmulDesc op = nullptr;
  hl::MatrixLayout a = nullptr, b = nullptr, c = nullptr;
  explicit HlObjects(const hl::Api& loaded) : api(loaded) {}
  HlObjects(const HlObjects&) = delete;
  HlObjects& operator=(const HlObjects&) = delete;
  ~HlObjects() {
    for (hl::MatrixLayout l : {a, b, c})
      if (l) api.matrix_layout_destroy(l);
    if (op) api.matmul_desc_destroy(op);
    if (handle) api.destroy(handle);
  }
};

Result<hl::MatrixLayout> make_layout(const hl::Api& api, int type, std::uint64_t rows, std::uint64_t cols,
                                     std::int64_t ld, std::int32_t batch, std::int64_t stride) {
  hl::MatrixLayout l = nullptr;
  KF_TRY(check(api.matrix_layout_create(&l, type, rows, cols, ld), "hipblasLtMatrixLayoutCreate"));
  if (batch > 1) {
    hl::StatusCode st = api.matrix_layout_set_attribute(l, hl::kLayoutBatchCount, &batch, sizeof batch);
    if (st == hl::kSuccess)
      st = api.matrix_layout_set_attribute(l, hl::kLayoutStridedBatchOffset, &stride, sizeof stride);
    if (st != hl::kSuccess) {
      api.matrix_layout_destroy(l);
      return hl_error("hipblasLtMatrixLayoutSetAttribute (batch)", st);
    }
  }
  return l;
}

Status make_objects(HlObjects& o, const ColumnMajorGemm& g, int in_type) {
  const hl::Api& api = o.api;
  const std::int32_t op_a = g.trans_a ? hl::kOpT : hl::kOpN, op_b = g.trans_b ? hl::kOpT : hl::kOpN;
  KF_TRY(check(api.create(&o.handle), "hipblasLtCreate"));
  KF_TRY(check(api.matmul_desc_create(&o.op, hl::kCompute32F, hl::kR32F), "hipblasLtMatmulDescCreate"));
  KF_TRY(check(api.matmul_desc_set_attribute(o.op, hl::kDescTransA, &op_a, sizeof op_a), "TRANSA"));
  KF_TRY(check(api.matmul_desc_set_attribute(o.op, hl::kDescTransB, &op_b, sizeof op_b), "TRANSB"));
  KF_TRY_ASSIGN(a, make_layout(api, in_type, g.a_rows, g.a_cols, g.lda, g.batch, g.a_stride));
  o.a = a;
  KF_TRY_ASSIGN(b, make_layout(api, in_type, g.b_rows, g.b_cols, g.ldb, g.batch, g.b_stride));
  o.b = b;
  KF_TRY_ASSIGN(c, make_layout(api, hl::kR32F, g.m, g.n, g.ldc, g.batch, g.c_stride));
  o.c = c;
  return ok_status();
}

Result<std::vector<hl::HeuristicResult>> heuristic(const HlObjects& o) {
  const hl::Api& api = o.api;
  hl::Preference pref = nullptr;
  KF_TRY(check(api.preference_create(&pref), "hipblasLtMatmulPreferenceCreate"));
  const std::uint64_t max_ws = kMaxWorkspace;
  hl::StatusCode st = api.preference_set_attribute(pref, hl::kPrefMaxWorkspaceBytes, &max_ws, sizeof max_ws);
  std::vector<hl::HeuristicResult> results(kHeuristicCount);
  int returned = 0;
  if (st == hl::kSuccess)
    st = api.algo_get_heuristic(o.handle, o.op, o.a, o.b, o.c, o.c, pref, kHeuristicCount, results.data(),
                                &returned);
  api.preference_destroy(pref);
  if (st != hl::kSuccess) return hl_error("hipblasLtMatmulAlgoGetHeuristic", st);
  results.resize(static_cast<std::size_t>(std::max(returned, 0)));
  return results;
}

/// M N K alpha A B beta C bias (GemmOperator::arguments).
struct HlArgs {
  std::int32_t m = 0, n = 0, k = 0;
  float alpha = 0, beta = 0;
  void *a = nullptr, *b = nullptr, *c = nullptr;
};

Result<HlArgs> hl_args(const std::vector<KernelArg>& args, const std::string& name) {
  using K = KernelArg::Kind;
  if (args.size() != 9 || args[0].kind != K::kInt32 || args[1].kind != K::kInt32 ||
      args[2].kind != K::kInt32 || args[3].kind != K::kFloat32 || args[6].kind != K::kFloat32)
    return Error::bad_input(name + ": expected gemm's arguments M N K alpha A B beta C bias");
  HlArgs g{args[0].i32, args[1].i32, args[2].i32, args[3].f32, args[6].f32};
  void** out[] = {&g.a, &g.b, &g.c};
  const std::size_t at[] = {4, 5, 7};
  for (std::size_t i = 0; i < 3; ++i) {
    if (args[at[i]].kind != K::kBuffer || !args[at[i]].buffer)
      return Error::bad_input(name + ": argument " + std::to_string(at[i]) + " is not a buffer");
    KF_TRY_ASSIGN(address, hip_buffer_address(*args[at[i]].buffer));
    *out[i] = address;
  }
  return g;
}

class HipblasLtGemm final : public LibraryKernel {
 public:
  HipblasLtGemm(Device& device, std::unique_ptr<HlObjects> objects, const Problem& problem, std::string name)
      : device_(device), o_(std::move(objects)), problem_(problem), name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  nlohmann::json call_identity() const override { return identity_; }

  /// ALGO 16 (`algo` null), or `algo` with `workspace` bytes (allocated here).
  Status choose(const hl::Algo* algo, std::size_t workspace, nlohmann::json identity) {
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
    if (on_running) on_running();
    KF_TRY_ASSIGN(call, bind_call(args, geometry));
    return hip_timed_call(device_, call);
  }

  Status enqueue(const std::vector<KernelArg>& args, const LaunchGeometry& geometry) override {
    KF_TRY_ASSIGN(call, bind_call(args, geometry));
    return hip_enqueued_call(device_, call);
  }

 private:
  /// The hipblasLtMatmul of `args`, checked against the bound problem, to run on a stream.
  Result<std::function<Status(void*)>> bind_call(const std::vector<KernelArg>& args,
                                                 const LaunchGeometry& geometry) {
    KF_TRY_ASSIGN(g, hl_args(args, name_));
    if (g.m != problem_.dim("M") || g.n != problem_.dim("N") || g.k != problem_.dim("K") ||
        geometry.grid[2] != std::max<std::int64_t>(problem_.dim("batch"), 1))
      return Error::bad_input(name_ + ": bound for " + problem_.key() + ", called with other dims");
    void* ws = nullptr;
    if (workspace_) {
      KF_TRY_ASSIGN(address, hip_buffer_address(*workspace_));
      ws = address;
    }
    return std::function<Status(void*)>([this, g, ws](void* stream) -> Status {
      const hl::Api& api = o_->api;
      // kforge's B is hipBLASLt's A; C is read (beta) and written in place.
      const hl::StatusCode st =
          api.matmul(o_->handle, o_->op, &g.alpha, g.b, o_->a, g.a, o_->b, &g.beta, g.c, o_->c, g.c, o_->c,
                     has_algo_ ? &algo_ : nullptr, ws, workspace_bytes_, stream);
      if (st != hl::kSuccess) return hl_error(name_ + ": hipblasLtMatmul", st, ErrorCode::kLaunch);
      return ok_status();
    });
  }

  Device& device_;
  std::unique_ptr<HlObjects> o_;
  Problem problem_;
  std::string name_;
  bool has_algo_ = false;
  hl::Algo algo_{};
  std::size_t workspace_bytes_ = 0;
  std::unique_ptr<Buffer> workspace_;
  nlohmann::json identity_;
};

/// The stored algorithm's bytes where they replay, else the heuristic's `index`-th.
Status choose_algo(HipblasLtGemm& gemm, const HlObjects& o, int index, const nlohmann::json& stored) {
  nlohmann::json identity = {{"library", "hipblaslt"}, {"algo_index", index}};
  hl::Algo algo{};
  if (stored.is_object() && stored.value("algo", nlohmann::json()).is_string() &&
      stored.value("workspace_bytes", nlohmann::json()).is_number_unsigned() &&
      unhex(stored["algo"].get<std::string>(), algo.data, sizeof algo.data)) {
    const auto workspace = stored["workspace_bytes"].get<std::size_t>();
    algo.max_workspace_bytes = workspace;
    identity["algo"] = stored["algo"];
    identity["replayed"] = true;
    return gemm.choose(&algo, workspace, std::move(identity));
  }
  KF_TRY_ASSIGN(results, heuristic(o));
  if (static_cast<std::size_t>(index) >= results.size())
    return Error{ErrorCode::kUnsupported,
                 "hipblaslt: the heuristic offers " + std::to_string(results.size()) +
                     " algorithms for this problem; ALGO " + std::to_string(index) + " is past them",
                 {}};
  const hl::HeuristicResult& r = results[static_cast<std::size_t>(index)];
  identity["algo"] = hex(r.algo.data, sizeof r.algo.data);
  identity["waves"] = r.waves_count;
  return gemm.choose(&r.algo, r.workspace_size, std::move(identity));
}

}  // namespace

Result<std::unique_ptr<Kernel>> bind_hipblaslt_gemm(Device& device, const Problem& problem,
                                                    const Config& config, const std::string& name,
                                                    const nlohmann::json& stored) {
  if (!is_backend(device.info().backend, BackendId::kHip))
    return Error{ErrorCode::kUnsupported, "hipblaslt: " + device.info().name + " is not a HIP device", {}};
  if (!problem.epilogue.plain())
    return Error{ErrorCode::kUnsupported, "hipblaslt: kforge binds no epilogue of hipBLASLt", {}};
  const auto& api = hipblaslt::load();
  if (!api.ok()) return Error{ErrorCode::kUnsupported, "unavailable: " + api.error().message, {}};
  KF_TRY(hip_make_current(device));
  auto objects = std::make_unique<HlObjects>(**api);
  KF_TRY(make_objects(*objects, ColumnMajorGemm::of(problem), data_type(problem.dtype)));
  const HlObjects& o = *objects;
  auto gemm = std::make_unique<HipblasLtGemm>(device, std::move(objects), problem, name);
  auto it = config.values.find("ALGO");
  const int index = it == config.values.end() ? kDefaultAlgo : static_cast<int>(it->second);
  if (index == kDefaultAlgo) {
    KF_TRY(gemm->choose(nullptr, kMaxWorkspace,
                        {{"library", "hipblaslt"}, {"algo_index", index}, {"algo", "default"}}));
  } else {
    KF_TRY(choose_algo(*gemm, o, index, stored));
  }
  return std::unique_ptr<Kernel>(std::move(gemm));
}

}  // namespace kforge
