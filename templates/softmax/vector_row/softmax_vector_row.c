/* softmax_vector_row: Y = exp(X - max) / sum(exp(X - max)) over each row of
 * X (contract: generator/softmax_operator.hpp), reading each element of X
 * once. Portable: written against the kforge prelude (templates/prelude/,
 * docs/prelude.md), so it runs as OpenCL C, CUDA and HIP.
 *
 * A work-group handles RY rows with TX threads per row (block TX x RY).
 * Each thread keeps NV chunks of VW consecutive elements of its row in
 * registers (chunk j at column (j * TX + tx) * VW), so the row's TX * VW * NV
 * slots must cover it (the manifest's constraint); slots past the row hold
 * -Inf, which adds nothing. The maximum skips NaN; the sum of exp(x - max)
 * then carries a NaN into the reciprocal, as does a +Inf maximum, and a row
 * of -Inf only sums to 0: all three give a NaN row, as the contract says.
 * Reductions meet in warp shuffles where the backend has them
 * (KF_HAS_SHUFFLE), then across warps in local memory; on OpenCL in a
 * local-memory tree. The partials/counters scratch is not used. */

/* ---- tunable parameters (the generator defines them; defaults for a
 * standalone build) ---- */
#ifndef TX
#define TX 128 /* threads per row, a power of two: <= 32 is a row per (part of a) warp */
#endif
#ifndef RY
#define RY 1 /* rows per work-group */
#endif
#ifndef VW
#define VW 4 /* consecutive elements per load: 1, 2, 4, 8 */
#endif
#ifndef NV
#define NV 8 /* VW-chunks each thread holds in registers */
#endif

#ifndef KF_KERNEL_NAME
#define KF_KERNEL_NAME softmax_vector_row
#endif

#if TX < 1 || (TX & (TX - 1)) || RY < 1 || NV < 1 || (VW != 1 && VW != 2 && VW != 4 && VW != 8)
#error "softmax_vector_row: invalid configuration (see the manifest's constraints)"
#endif

/* Lanes that reduce in shuffles, and the partials each row leaves in local memory. */
#if KF_HAS_SHUFFLE
#define SMV_LANES (TX < KF_SHUFFLE_LANES ? TX : KF_SHUFFLE_LANES)
#define SMV_SLOTS (TX / SMV_LANES)
#else
#define SMV_SLOTS TX
#endif

/* The larger of a and b; NaN loses to anything (the sum catches it). */
KF_INLINE float smv_max(float a, float b) { return b > a ? b : a; }

/* The maximum (is_max) or the sum of s over the TX threads of row ty, in
 * every one of them. Each use has its own `red`, so no barrier is needed
 * after the reads. */
KF_INLINE float smv_row_reduce(float s, int is_max, KF_LOCAL_PTR float* red, int tx, int ty) {
#if KF_HAS_SHUFFLE
  for (int m = SMV_LANES / 2; m > 0; m >>= 1) {
    const float o = KF_SHUFFLE_XOR(s, m);
    s = is_max ? smv_max(s, o) : s + o;
  }
  if (SMV_SLOTS == 1) return s;
  if (tx % SMV_LANES == 0) red[ty * SMV_SLOTS + tx / SMV_LANES] = s;
  KF_BARRIER();
  s = red[ty * SMV_SLOTS];
  for (int i = 1; i < SMV_SLOTS; ++i) {
    const float o = red[ty * SMV_SLOTS + i];
    s = is_max ? smv_max(s, o) : s + o;
  }
#else
  red[ty * TX + tx] = s;
  KF_BARRIER();
  for (int off = TX / 2; off > 0; off >>= 1) {
    if (tx < off) {
      const float a = red[ty * TX + tx], o = red[ty * TX + tx + off];
      red[ty * TX + tx] = is_max ? smv_max(a, o) : a + o;
    }
    KF_BARRIER();
  }
  s = red[ty * TX];
#endif
  return s;
}

KF_KERNEL void KF_LAUNCH_BOUNDS(TX, RY, 1)
KF_KERNEL_NAME(int rows, int cols, KF_GLOBAL const kf_in_t* KF_RESTRICT X, KF_GLOBAL float* KF_RESTRICT Y,
               KF_GLOBAL float* partials, KF_GLOBAL int* counters) {
  KF_LOCAL float red_max[SMV_SLOTS * RY];
  KF_LOCAL float red_sum[SMV_SLOTS * RY];

  const int tx = KF_THREAD_X;
  const int ty = KF_THREAD_Y;
  const int row = KF_BLOCK_X * RY + ty;
  const int n = row < rows ? cols : 0; /* elements this thread's row owns */
  const int aligned = cols % VW == 0;  /* every chunk starts on a VW boundary */
  const size_t base = (size_t)(row < rows ? row : 0) * (size_t)cols;
  const KF_GLOBAL kf_in_t* x = X + base;

  float v[NV][VW];
  float mx = -INFINITY;
  KF_UNROLL
  for (int j = 0; j < NV; ++j) {
    const int c = (j * TX + tx) * VW;
    if (aligned && c + VW <= n) {
      KF_LOAD_IN_VEC_ALIGNED(v[j], x, c, VW);
    } else {
      KF_UNROLL
      for (int e = 0; e < VW; ++e) v[j][e] = c + e < n ? KF_LOAD_IN(x, c + e) : -INFINITY;
    }
    KF_UNROLL
    for (int e = 0; e < VW; ++e) mx = smv_max(mx, v[j][e]);
  }
  const float row_max = smv_row_reduce(mx, 1, red_max, tx, ty);

  /* exp(-Inf - max) is 0 except for a -Inf max, where it is NaN: -Inf adds 0. */
  float sum = 0.0f;
  KF_UNROLL
  for (int j = 0; j < NV; ++j) {
    KF_UNROLL
    for (int e = 0; e < VW; ++e) {
      v[j][e] = v[j][e] == -INFINITY ? 0.0f : exp(v[j][e] - row_max);
      sum += v[j][e];
    }
  }
  const float total = smv_row_reduce(sum, 0, red_sum, tx, ty);
  const float inv = (row_max == INFINITY || total == 0.0f) ? NAN : 1.0f / total;

  KF_GLOBAL float* y = Y + base;
  KF_UNROLL
  for (int j = 0; j < NV; ++j) {
    const int c = (j * TX + tx) * VW;
    KF_UNROLL
    for (int e = 0; e < VW; ++e) v[j][e] *= inv;
    if (aligned && c + VW <= n) {
      KF_STORE_F32_VEC(y, c, v[j], VW);
    } else {
      for (int e = 0; e < VW && c + e < n; ++e) y[c + e] = v[j][e];
    }
  }
  (void)partials;
  (void)counters;
}
