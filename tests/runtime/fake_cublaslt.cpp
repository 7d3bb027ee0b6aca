// A stand-in for libcublasLt, built only for tests and loaded through
// KFORGE_CUBLASLT_LIBRARY, so that gemm_cublaslt runs on the fake CUDA
// device (fake_gpu_driver.hpp) without a GPU. It exports the entry points
// kforge binds (cublaslt_api.cpp) with cublasLt.h's values: descriptors and
// layouts are kept as set, the heuristic offers three algorithms (each with
// its own configuration fields and workspace), AlgoInit/AlgoCheck rebuild
// and check one, and cublasLtMatmul computes D on the fake GPU's memory
// (fake_blaslt.hpp), bias and relu epilogues included.
#include <cstring>

#include "tests/runtime/fake_blaslt.hpp"

namespace {

namespace fb = kforge::test::fake_blaslt;

// cublasStatus_t.
constexpr int kSuccess = 0, kInvalidValue = 7, kNotSupported = 15;
constexpr int kCompute32F = 68, kOpN = 0, kOpT = 1;
// cublasLtMatmulDescAttributes_t, cublasLtMatrixLayoutAttribute_t.
constexpr int kDescTransA = 3, kDescTransB = 4, kDescEpilogue = 7, kDescBiasPointer = 8;
constexpr int kLayoutBatchCount = 5, kLayoutStridedBatchOffset = 6;
constexpr int kPrefMaxWorkspaceBytes = 1;

/// cublasLtMatmulAlgo_t (64 opaque bytes): a marker, then the nine
/// cublasLtMatmulAlgoConfigAttributes_t fields by attribute number.
struct Algo {
  std::uint64_t data[8];
};
struct AlgoFields {
  std::uint32_t marker;
  std::int32_t value[9];
};
constexpr std::uint32_t kAlgoMarker = 0xa160;
/// Each configuration attribute's size (ID first; inner and cluster shape are uint16).
constexpr std::size_t kFieldBytes[9] = {4, 4, 4, 4, 4, 4, 4, 2, 2};

struct HeuristicResult {
  Algo algo;
  std::size_t workspace_size;
  int state;
  float waves_count;
  int reserved[4];
};

AlgoFields fields_of(const Algo& a) {
  AlgoFields f{};
  std::memcpy(&f, a.data, sizeof f);
  return f;
}

/// The configuration the heuristic gives algorithm `id`: what AlgoCheck expects back.
AlgoFields canonical(int id) {
  AlgoFields f{};
  f.marker = kAlgoMarker;
  f.value[0] = id;
  f.value[1] = 10 + id;  // tile
  f.value[2] = 1;        // split-k
  f.value[6] = 20 + id;  // stages
  f.value[7] = id;       // inner shape
  return f;
}

Algo algo_of(const AlgoFields& f) {
  Algo a{};
  std::memcpy(a.data, &f, sizeof f);
  return a;
}

/// The algorithm's id where `a` is one this library made and still knows, else -1.
int known_id(const Algo& a) {
  const AlgoFields f = fields_of(a);
  if (f.marker != kAlgoMarker || f.value[0] < 0 || f.value[0] >= fb::kAlgoCount) return -1;
  const AlgoFields want = canonical(f.value[0]);
  return std::memcmp(&f, &want, sizeof f) == 0 ? f.value[0] : -1;
}

}  // namespace

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

FAKE_EXPORT int cublasLtCreate(fb::Handle** h) {
  *h = new fb::Handle;
  return kSuccess;
}
FAKE_EXPORT int cublasLtDestroy(fb::Handle* h) {
  delete h;
  return kSuccess;
}
FAKE_EXPORT std::size_t cublasLtGetVersion() {
  return 130100;
}
FAKE_EXPORT const char* cublasLtGetStatusString(int status) {
  switch (status) {
    case kSuccess:
      return "CUBLAS_STATUS_SUCCESS";
    case kInvalidValue:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case kNotSupported:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    default:
      return "CUBLAS_STATUS_UNKNOWN";
  }
}

FAKE_EXPORT int cublasLtMatmulDescCreate(fb::Desc** d, int compute, int scale) {
  if (compute != kCompute32F || scale != fb::kR32F) return kNotSupported;  // all this fake computes
  *d = new fb::Desc{compute, scale};
  return kSuccess;
}
FAKE_EXPORT int cublasLtMatmulDescDestroy(fb::Desc* d) {
  delete d;
  return kSuccess;
}
FAKE_EXPORT int cublasLtMatmulDescSetAttribute(fb::Desc* d, int attribute, const void* buf,
                                               std::size_t size) {
  std::int32_t op = 0;
  std::uint32_t epilogue = 0;
  switch (attribute) {
    case kDescTransA:
    case kDescTransB:
      if (!fb::read(buf, size, op) || (op != kOpN && op != kOpT)) return kInvalidValue;
      (attribute == kDescTransA ? d->trans_a : d->trans_b) = op == kOpT;
      return kSuccess;
    case kDescEpilogue:
      if (!fb::read(buf, size, epilogue)) return kInvalidValue;
      return fb::set_epilogue(*d, epilogue) ? kSuccess : kNotSupported;
    case kDescBiasPointer:
      return fb::read(buf, size, d->bias) ? kSuccess : kInvalidValue;
    default:
      return kInvalidValue;
  }
}

FAKE_EXPORT int cublasLtMatrixLayoutCreate(fb::Layout** l, int type, std::uint64_t rows, std::uint64_t cols,
                                           std::int64_t ld) {
  const fb::Layout layout{type, rows, cols, ld};
  if (!fb::valid_layout(layout)) return kInvalidValue;
  *l = new fb::Layout(layout);
  return kSuccess;
}
FAKE_EXPORT int cublasLtMatrixLayoutDestroy(fb::Layout* l) {
  delete l;
  return kSuccess;
}
FAKE_EXPORT int cublasLtMatrixLayoutSetAttribute(fb::Layout* l, int attribute, const void* buf,
                                                 std::size_t size) {
  if (attribute == kLayoutBatchCount)
    return fb::read(buf, size, l->batch) && l->batch >= 1 ? kSuccess : kInvalidValue;
  if (attribute == kLayoutStridedBatchOffset)
    return fb::read(buf, size, l->stride) ? kSuccess : kInvalidValue;
  return kInvalidValue;
}

FAKE_EXPORT int cublasLtMatmulPreferenceCreate(fb::Preference** p) {
  *p = new fb::Preference;
  return kSuccess;
}
FAKE_EXPORT int cublasLtMatmulPreferenceDestroy(fb::Preference* p) {
  delete p;
  return kSuccess;
}
FAKE_EXPORT int cublasLtMatmulPreferenceSetAttribute(fb::Preference* p, int attribute, const void* buf,
                                                     std::size_t size) {
  if (attribute != kPrefMaxWorkspaceBytes) return kInvalidValue;
  return fb::read(buf, size, p->max_workspace) ? kSuccess : kInvalidValue;
}

/// The algorithms within the preference's workspace, in the heuristic's order.
FAKE_EXPORT int cublasLtMatmulAlgoGetHeuristic(fb::Handle* h, fb::Desc* d, fb::Layout* a, fb::Layout* b,
                                               fb::Layout* c, fb::Layout* o, fb::Preference* p, int requested,
                                               HeuristicResult* results, int* returned) {
  if (!h || !d || !p || requested < 1) return kInvalidValue;
  if (!fb::shapes_agree(*d, *a, *b, *c, *o)) return kNotSupported;
  *returned = 0;
  for (int id = 0; id < fb::kAlgoCount && *returned < requested; ++id) {
    if (fb::kAlgoWorkspace[id] > p->max_workspace) continue;
    results[*returned] = HeuristicResult{algo_of(canonical(id)), fb::kAlgoWorkspace[id], kSuccess, 1.0f, {}};
    ++*returned;
  }
  return *returned > 0 ? kSuccess : kNotSupported;
}

FAKE_EXPORT int cublasLtMatmulAlgoInit(fb::Handle* h, int compute, int scale, int a, int b, int c, int d,
                                       int id, Algo* algo) {
  if (!h || compute != kCompute32F || scale != fb::kR32F || a != b || c != fb::kR32F || d != fb::kR32F)
    return kNotSupported;
  if (id < 0 || id >= fb::kAlgoCount) return kNotSupported;
  AlgoFields f{};
  f.marker = kAlgoMarker;
  f.value[0] = id;
  *algo = algo_of(f);
  return kSuccess;
}

FAKE_EXPORT int cublasLtMatmulAlgoConfigSetAttribute(Algo* algo, int attribute, const void* buf,
                                                     std::size_t size) {
  // The ID is AlgoInit's alone.
  if (attribute <= 0 || attribute >= 9 || size != kFieldBytes[attribute]) return kInvalidValue;
  AlgoFields f = fields_of(*algo);
  if (f.marker != kAlgoMarker) return kInvalidValue;
  std::uint16_t v16 = 0;
  std::int32_t v32 = 0;
  if (size == 2) {
    std::memcpy(&v16, buf, 2);
    v32 = v16;
  } else {
    std::memcpy(&v32, buf, 4);
  }
  f.value[attribute] = v32;
  *algo = algo_of(f);
  return kSuccess;
}

FAKE_EXPORT int cublasLtMatmulAlgoConfigGetAttribute(const Algo* algo, int attribute, void* buf,
                                                     std::size_t size, std::size_t* written) {
  if (attribute < 0 || attribute >= 9 || size < kFieldBytes[attribute]) return kInvalidValue;
  const AlgoFields f = fields_of(*algo);
  if (kFieldBytes[attribute] == 2) {
    const auto v16 = static_cast<std::uint16_t>(f.value[attribute]);
    std::memcpy(buf, &v16, 2);
  } else {
    std::memcpy(buf, &f.value[attribute], 4);
  }
  if (written) *written = kFieldBytes[attribute];
  return kSuccess;
}

/// Accepts an algorithm configured as the heuristic gave it, with its workspace.
FAKE_EXPORT int cublasLtMatmulAlgoCheck(fb::Handle* h, fb::Desc* d, fb::Layout* a, fb::Layout* b,
                                        fb::Layout* c, fb::Layout* o, const Algo* algo,
                                        HeuristicResult* result) {
  if (!h || !d || !algo) return kInvalidValue;
  if (!fb::shapes_agree(*d, *a, *b, *c, *o)) return kNotSupported;
  const int id = known_id(*algo);
  if (id < 0) return kNotSupported;
  *result = HeuristicResult{*algo, fb::kAlgoWorkspace[id], kSuccess, 1.0f, {}};
  return kSuccess;
}

FAKE_EXPORT int cublasLtMatmul(fb::Handle* h, fb::Desc* d, const float* alpha, const void* a, fb::Layout* la,
                               const void* b, fb::Layout* lb, const float* beta, const float* c,
                               fb::Layout* lc, float* out, fb::Layout* lo, const Algo* algo, void* workspace,
                               std::size_t workspace_bytes, void* /*stream*/) {
  if (!h || !d || !alpha || !beta) return kInvalidValue;
  if (!fb::shapes_agree(*d, *la, *lb, *lc, *lo)) return kNotSupported;
  if (d->bias_epilogue && !d->bias) return kInvalidValue;
  if (algo) {
    const int id = known_id(*algo);
    if (id < 0) return kInvalidValue;
    const std::size_t need = fb::kAlgoWorkspace[id];
    if (workspace_bytes < need || (need > 0 && !workspace)) return kInvalidValue;
    if (need > 0) std::memset(workspace, 0, need);  // it is the algorithm's to use
  }
  fb::matmul(*d, *alpha, a, *la, b, *lb, *beta, c, *lc, out, *lo);
  return kSuccess;
}
