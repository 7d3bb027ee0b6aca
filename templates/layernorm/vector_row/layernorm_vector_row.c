/* layernorm_vector_row: Y = (X - mean) / sqrt(var + eps) * W + B over each
 * row of X (contract: generator/layernorm_operator.hpp), reading each
 * element of X once. Portable: written against the kforge prelude
 * (templates/prelude/, docs/prelude.md), so it runs as OpenCL C, CUDA and HIP.
 *
 * A work-group normalizes RY rows with TX threads per row (block TX x RY).
 * Each thread keeps NV chunks of VW consecutive elements of its row in
 * registers (chunk j at column (j * TX + tx) * VW), so the row's TX * VW * NV
 * slots must cover it (the manifest's constraint). The statistics take two
 * passes over the registers, as layernorm_rowwise's over memory: the mean,
 * then the squared deviations from it (slots past the row masked out), so a
 * constant row has variance 0. Both sums meet in the prelude's kf_row_sum
 * (warp shuffles where the backend has them, then local memory; on OpenCL a
 * local-memory tree). The output pass reuses the registers. */

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
#define KF_KERNEL_NAME layernorm_vector_row
#endif

#if TX < 1 || (TX & (TX - 1)) || RY < 1 || NV < 1 || (VW != 1 && VW != 2 && VW != 4 && VW != 8)
#error "layernorm_vector_row: invalid configuration (see the manifest's constraints)"
#endif

KF_KERNEL void KF_LAUNCH_BOUNDS(TX, RY, 1)
KF_KERNEL_NAME(int rows, int cols, float eps, KF_GLOBAL const kf_in_t* KF_RESTRICT X,
               KF_GLOBAL const kf_in_t* KF_RESTRICT W, KF_GLOBAL const kf_in_t* KF_RESTRICT B,
               KF_GLOBAL float* KF_RESTRICT Y) {
  /* One row's partials per reduction: the second needs no barrier before it. */
  KF_LOCAL float red_mean[KF_ROW_SLOTS(TX) * RY];
  KF_LOCAL float red_var[KF_ROW_SLOTS(TX) * RY];

  const int tx = KF_THREAD_X;
  const int ty = KF_THREAD_Y;
  const int row = KF_BLOCK_X * RY + ty;
  const int n = row < rows ? cols : 0; /* elements this thread's row owns */
  const int aligned = cols % VW == 0;  /* every chunk starts on a VW boundary */
  const size_t base = (size_t)(row < rows ? row : 0) * (size_t)cols;
  const KF_GLOBAL kf_in_t* x = X + base;

  float v[NV][VW];
  float sum = 0.0f;
  KF_UNROLL
  for (int j = 0; j < NV; ++j) {
    const int c = (j * TX + tx) * VW;
    KF_LOAD_ROW_CHUNK(v[j], x, c, n, VW, aligned, 0.0f);
    KF_UNROLL
    for (int e = 0; e < VW; ++e) sum += v[j][e];
  }
  const float mean = kf_row_sum(sum, red_mean + ty * KF_ROW_SLOTS(TX), tx, TX) / (float)cols;

  float sq = 0.0f;
  KF_UNROLL
  for (int j = 0; j < NV; ++j) {
    const int c = (j * TX + tx) * VW;
    KF_UNROLL
    for (int e = 0; e < VW; ++e) {
      const float d = c + e < n ? v[j][e] - mean : 0.0f;
      sq += d * d;
    }
  }
  const float rstd = KF_RSQRT(kf_row_sum(sq, red_var + ty * KF_ROW_SLOTS(TX), tx, TX) / (float)cols + eps);

  KF_GLOBAL float* y = Y + base;
  KF_UNROLL
  for (int j = 0; j < NV; ++j) {
    const int c = (j * TX + tx) * VW;
    if (aligned && c + VW <= n) {
      float w[VW], b[VW];
      KF_LOAD_IN_VEC_ALIGNED(w, W, c, VW);
      KF_LOAD_IN_VEC_ALIGNED(b, B, c, VW);
      KF_UNROLL
      for (int e = 0; e < VW; ++e) w[e] = (v[j][e] - mean) * rstd * w[e] + b[e];
      KF_STORE_F32_VEC(y, c, w, VW);
    } else {
      for (int e = 0; e < VW && c + e < n; ++e)
        y[c + e] = (v[j][e] - mean) * rstd * KF_LOAD_IN(W, c + e) + KF_LOAD_IN(B, c + e);
    }
  }
}
