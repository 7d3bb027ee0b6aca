/* reduce_tiled: sum or max over the last axis (KF_AXIS 0) or the whole tensor
 * (KF_AXIS 1) (contract: generator/reduce_operator.hpp). Portable.
 *
 * Work-group (part, o) reduces chunk `part` of output o's LEN elements: each
 * thread makes WPT independent VW-wide loads per step (consecutive threads,
 * consecutive addresses), keeps WPT accumulators, and a local-memory tree
 * combines the block. SPLIT == 1: the block writes out[o]. SPLIT > 1: it
 * writes partials[o * 64 + part], fences, and takes a ticket on counters[o];
 * the group that draws the last ticket combines the SPLIT partials in order
 * (deterministic), writes out[o] and resets the counter to zero. */

#ifndef BLOCK
#define BLOCK 64 /* threads per work-group */
#endif
#ifndef WPT
#define WPT 2 /* independent loads per thread per step */
#endif
#ifndef VW
#define VW 1 /* elements per load: 1, 2, 4 */
#endif
#ifndef SPLIT
#define SPLIT 1 /* work-groups per output */
#endif
#ifndef KF_KERNEL_NAME
#define KF_KERNEL_NAME reduce_tiled
#endif
#ifndef KF_KIND
#define KF_KIND 0 /* 0 sum, 1 max */
#endif
#ifndef KF_AXIS
#define KF_AXIS 0 /* 0 last, 1 all */
#endif

#define MAX_SPLIT 64 /* kReduceMaxSplit: partials per output */

#if (BLOCK & (BLOCK - 1)) || SPLIT > MAX_SPLIT
#error "reduce_tiled: BLOCK must be a power of two and SPLIT <= 64"
#endif

#if KF_KIND == 1
#define RED_INIT (-INFINITY)
/* NaN propagates: once a is NaN it stays; a NaN b replaces a. */
KF_INLINE float kf_combine(float a, float b) { return (a == a && (b > a || b != b)) ? b : a; }
#else
#define RED_INIT 0.0f
KF_INLINE float kf_combine(float a, float b) { return a + b; }
#endif

KF_KERNEL void KF_LAUNCH_BOUNDS(BLOCK, 1, 1)
KF_KERNEL_NAME(int rows, int cols, KF_GLOBAL const kf_in_t* KF_RESTRICT X, KF_GLOBAL float* KF_RESTRICT out,
               KF_GLOBAL float* partials, KF_GLOBAL int* counters) {
  KF_LOCAL float red[BLOCK];
  KF_LOCAL int is_last[1];
  const int tid = KF_THREAD_X;
  const int part = KF_BLOCK_X;
  const int o = KF_BLOCK_Y;
#if KF_AXIS == 1
  const int len = rows * cols;
#else
  const int len = cols;
#endif
  X += (size_t)o * (size_t)len;
  /* Chunks are whole vectors so that every full load stays inside one chunk. */
  const int chunk = (((len + SPLIT - 1) / SPLIT + VW - 1) / VW) * VW;
  const int begin = part * chunk;
  const int end = min(len, begin + chunk);

  float acc[WPT];
  KF_UNROLL
  for (int w = 0; w < WPT; ++w) acc[w] = RED_INIT;
  for (int base = begin; base < end; base += BLOCK * WPT * VW) {
    KF_UNROLL
    for (int w = 0; w < WPT; ++w) {
      const int i = base + (w * BLOCK + tid) * VW;
      float v[VW];
      if (i + VW <= end) {
        KF_LOAD_IN_VEC(v, X, (size_t)i, VW);
      } else {
        KF_UNROLL
        for (int e = 0; e < VW; ++e) v[e] = i + e < end ? KF_LOAD_IN(X, (size_t)(i + e)) : RED_INIT;
      }
      KF_UNROLL
      for (int e = 0; e < VW; ++e) acc[w] = kf_combine(acc[w], v[e]);
    }
  }
  float a = acc[0];
  KF_UNROLL
  for (int w = 1; w < WPT; ++w) a = kf_combine(a, acc[w]);
  red[tid] = a;
  KF_BARRIER();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) red[tid] = kf_combine(red[tid], red[tid + s]);
    KF_BARRIER();
  }
#if SPLIT == 1
  if (tid == 0) out[o] = red[0];
#else
  if (tid == 0) {
    partials[(size_t)o * MAX_SPLIT + part] = red[0];
    KF_GLOBAL_FENCE();
    is_last[0] = KF_ATOMIC_INC(&counters[o]) == SPLIT - 1;
  }
  KF_BARRIER();
  if (is_last[0] && tid == 0) {
    KF_GLOBAL_FENCE();
    KF_GLOBAL volatile float* p = partials + (size_t)o * MAX_SPLIT;
    float r = p[0];
    for (int q = 1; q < SPLIT; ++q) r = kf_combine(r, p[q]);
    out[o] = r;
    counters[o] = 0;
  }
#endif
}
