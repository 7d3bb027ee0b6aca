/* softmax_vector_row: Y = exp(X - max) / sum(exp(X - max)) over each row of
 * X (contract: generator/softmax_operator.hpp), reading each element of X
 * once. Portable: written against the kforge prelude (templates/prelude/,
 * docs/prelude.md), so it runs as OpenCL C, CUDA and HIP.
 *
 * A work-group handles RY rows with TX threads per row (block TX x RY).
 * Each thread keeps NV chunks of VW consecutive elements of its row in
 * registers (chunk j at column (j * TX + tx) * VW), so the row's TX * VW * NV
 * slots must cover it (the manifest's constraint); slots past the row hold
 * -Inf, which adds nothing. A NaN makes the maximum NaN and with it every
 * exp and the sum; a +Inf maximum gives a NaN reciprocal; a row of -Inf only
 * sums to 0: all three give a NaN row, as the contract says.
 * Both meet in the prelude's kf_row_max and kf_row_sum (warp shuffles where
 * the backend has them, then local memory; on OpenCL a local-memory tree).
 * The partials/counters scratch is not used. */

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

KF_KERNEL void KF_LAUNCH_BOUNDS(TX, RY, 1)
KF_KERNEL_NAME(int rows, int cols, KF_GLOBAL const kf_in_t* KF_RESTRICT X, KF_GLOBAL float* KF_RESTRICT Y,
               KF_GLOBAL float* partials, KF_GLOBAL int* counters) {
  /* One row's partials per reduction: the second needs no barrier before it. */
  KF_LOCAL float red_max[KF_ROW_SLOTS(TX) * RY];
  KF_LOCAL float red_sum[KF_ROW_SLOTS(TX) * RY];

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
    KF_LOAD_ROW_CHUNK(v[j], x, c, n, VW, aligned, -INFINITY);
    KF_UNROLL
    for (int e = 0; e < VW; ++e) mx = kf_row_combine(mx, v[j][e], 1);
  }
  const float row_max = kf_row_max(mx, red_max + ty * KF_ROW_SLOTS(TX), tx, TX);

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
  const float total = kf_row_sum(sum, red_sum + ty * KF_ROW_SLOTS(TX), tx, TX);
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
