// A stand-in for libhipblaslt, built only for tests and loaded through
// KFORGE_HIPBLASLT_LIBRARY, so that gemm_hipblaslt runs on the fake HIP
// device (fake_gpu_driver.hpp) without a GPU. It exports the entry points
// kforge binds (hipblaslt_api.cpp) with hipblaslt.h's values (ROCm 6):
// descriptors and layouts are kept as set, the heuristic offers three
// algorithms, each an opaque 16 bytes with the workspace it needs, and
// hipblasLtMatmul computes D on the fake GPU's memory (fake_blaslt.hpp).
#include <cstring>

#include "tests/runtime/fake_blaslt.hpp"

namespace {

namespace fb = kforge::test::fake_blaslt;

// hipblasStatus_t, hipblasComputeType_t, hipblasOperation_t.
constexpr int kSuccess = 0, kInvalidValue = 3, kNotSupported = 7;
constexpr int kCompute32F = 2, kOpN = 111, kOpT = 112;
// hipblasLtMatmulDescAttributes_t, hipblasLtMatrixLayoutAttribute_t.
constexpr int kDescTransA = 0, kDescTransB = 1, kDescEpilogue = 2, kDescBiasPointer = 3;
constexpr int kLayoutBatchCount = 0, kLayoutStridedBatchOffset = 1;
constexpr int kPrefMaxWorkspaceBytes = 1;

/// hipblasLtMatmulAlgo_t: opaque bytes (here a marker and the id) and the workspace it may use.
struct Algo {
  std::uint8_t data[16];
  std::size_t max_workspace_bytes;
};
constexpr std::uint8_t kMarker[4] = {'f', 'h', 'l', 't'};

struct HeuristicResult {
  Algo algo;
  std::size_t workspace_size;
  int state;
  float waves_count;
  int reserved[4];
};

Algo algo_of(int id) {
  Algo a{};
  std::memcpy(a.data, kMarker, sizeof kMarker);
  a.data[4] = static_cast<std::uint8_t>(id);
  a.data[5] = static_cast<std::uint8_t>(0x30 + id);  // something past the id, as a real solution index has
  a.max_workspace_bytes = fb::kAlgoWorkspace[id];
  return a;
}

/// The id of an algorithm's bytes as the heuristic gave them, else -1.
int known_id(const Algo& a) {
  if (std::memcmp(a.data, kMarker, sizeof kMarker) != 0 || a.data[4] >= fb::kAlgoCount) return -1;
  const Algo want = algo_of(a.data[4]);
  return std::memcmp(a.data, want.data, sizeof a.data) == 0 ? a.data[4] : -1;
}

}  // namespace

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

FAKE_EXPORT int hipblasLtCreate(fb::Handle** h) {
  *h = new fb::Handle;
  return kSuccess;
}
FAKE_EXPORT int hipblasLtDestroy(fb::Handle* h) {
  delete h;
  return kSuccess;
}

FAKE_EXPORT int hipblasLtMatmulDescCreate(fb::Desc** d, int compute, int scale) {
  if (compute != kCompute32F || scale != fb::kR32F) return kNotSupported;  // all this fake computes
  *d = new fb::Desc{compute, scale};
  return kSuccess;
}
FAKE_EXPORT int hipblasLtMatmulDescDestroy(fb::Desc* d) {
  delete d;
  return kSuccess;
}
FAKE_EXPORT int hipblasLtMatmulDescSetAttribute(fb::Desc* d, int attribute, const void* buf,
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

FAKE_EXPORT int hipblasLtMatrixLayoutCreate(fb::Layout** l, int type, std::uint64_t rows, std::uint64_t cols,
                                            std::int64_t ld) {
  const fb::Layout layout{type, rows, cols, ld};
  if (!fb::valid_layout(layout)) return kInvalidValue;
  *l = new fb::Layout(layout);
  return kSuccess;
}
FAKE_EXPORT int hipblasLtMatrixLayoutDestroy(fb::Layout* l) {
  delete l;
  return kSuccess;
}
FAKE_EXPORT int hipblasLtMatrixLayoutSetAttribute(fb::Layout* l, int attribute, const void* buf,
                                                  std::size_t size) {
  if (attribute == kLayoutBatchCount)
    return fb::read(buf, size, l->batch) && l->batch >= 1 ? kSuccess : kInvalidValue;
  if (attribute == kLayoutStridedBatchOffset)
    return fb::read(buf, size, l->stride) ? kSuccess : kInvalidValue;
  return kInvalidValue;
}

FAKE_EXPORT int hipblasLtMatmulPreferenceCreate(fb::Preference** p) {
  *p = new fb::Preference;
  return kSuccess;
}
FAKE_EXPORT int hipblasLtMatmulPreferenceDestroy(fb::Preference* p) {
  delete p;
  return kSuccess;
}
FAKE_EXPORT int hipblasLtMatmulPreferenceSetAttribute(fb::Preference* p, int attribute, const void* buf,
                                                      std::size_t size) {
  if (attribute != kPrefMaxWorkspaceBytes) return kInvalidValue;
  return fb::read(buf, size, p->max_workspace) ? kSuccess : kInvalidValue;
}

/// The algorithms within the preference's workspace, in the heuristic's order.
FAKE_EXPORT int hipblasLtMatmulAlgoGetHeuristic(fb::Handle* h, fb::Desc* d, fb::Layout* a, fb::Layout* b,
                                                fb::Layout* c, fb::Layout* o, fb::Preference* p,
                                                int requested, HeuristicResult* results, int* returned) {
  if (!h || !d || !p || requested < 1) return kInvalidValue;
  if (!fb::shapes_agree(*d, *a, *b, *c, *o)) return kNotSupported;
  *returned = 0;
  for (int id = 0; id < fb::kAlgoCount && *returned < requested; ++id) {
    if (fb::kAlgoWorkspace[id] > p->max_workspace) continue;
    results[*returned] = HeuristicResult{algo_of(id), fb::kAlgoWorkspace[id], kSuccess, 1.0f, {}};
    ++*returned;
  }
  return *returned > 0 ? kSuccess : kNotSupported;
}

FAKE_EXPORT int hipblasLtMatmul(fb::Handle* h, fb::Desc* d, const float* alpha, const void* a, fb::Layout* la,
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
    if (workspace_bytes < need || algo->max_workspace_bytes < need || (need > 0 && !workspace))
      return kInvalidValue;
    if (need > 0) std::memset(workspace, 0, need);  // it is the algorithm's to use
  }
  fb::matmul(*d, *alpha, a, *la, b, *lb, *beta, c, *lc, out, *lo);
  return kSuccess;
}
