/* reduce_vector_row: sum or max over the last axis (KF_AXIS 0; the manifest's
 * envelope leaves axis=all to reduce_tiled) of a rows x cols tensor
 * (contract: generator/reduce_operator.hpp). Portable: written against the
 * kforge prelude (templates/prelude/, docs/prelude.md), so it runs as OpenCL
 * C, CUDA and HIP.
 *
 * A work-group reduces RY rows with TX threads per row (block TX x RY): for
 * rows of a few hundred elements a row is one warp, or part of one, where
 * reduce_tiled would give each row a whole work-group. Each thread strides
 * its row in VW-wide chunks (aligned vector loads where the row is a
 * multiple of VW, element loads in the tail), then the prelude's
 * kf_row_sum / kf_row_max combine the row (shuffles, then local memory; a
 * local-memory tree on OpenCL). max propagates NaN. One pass: the
 * partials/counters scratch is not used. */

/* ---- tunable parameters (the generator defines them; defaults for a
 * standalone build) ---- */
#ifndef TX
#define TX 32 /* threads per row, a power of two */
#endif
#ifndef RY
#define RY 4 /* rows per work-group */
#endif
#ifndef VW
#define VW 4 /* consecutive elements per load: 1, 2, 4, 8 */
#endif

#ifndef KF_KERNEL_NAME
#define KF_KERNEL_NAME reduce_vector_row
#endif
#ifndef KF_KIND
#define KF_KIND 0 /* 0 sum, 1 max */
#endif

#if TX < 1 || (TX & (TX - 1)) || RY < 1 || (VW != 1 && VW != 2 && VW != 4 && VW != 8)
#error "reduce_vector_row: invalid configuration (see the manifest's constraints)"
#endif

#define RVR_IS_MAX (KF_KIND == 1)
#define RVR_INIT (RVR_IS_MAX ? -INFINITY : 0.0f)

KF_KERNEL void KF_LAUNCH_BOUNDS(TX, RY, 1)
KF_KERNEL_NAME(int rows, int cols, KF_GLOBAL const kf_in_t* KF_RESTRICT X, KF_GLOBAL float* KF_RESTRICT out,
               KF_GLOBAL float* partials, KF_GLOBAL int* counters) {
  KF_LOCAL float red[KF_ROW_SLOTS(TX) * RY];

  const int tx = KF_THREAD_X;
  const int ty = KF_THREAD_Y;
  const int row = KF_BLOCK_X * RY + ty;
  const int n = row < rows ? cols : 0; /* elements this thread's row owns */
  const int aligned = cols % VW == 0;  /* every chunk starts on a VW boundary */
  const KF_GLOBAL kf_in_t* x = X + (size_t)(row < rows ? row : 0) * (size_t)cols;

  float acc = RVR_INIT;
  for (int c = tx * VW; c < n; c += TX * VW) {
    float v[VW];
    KF_LOAD_ROW_CHUNK(v, x, c, n, VW, aligned, RVR_INIT);
    KF_UNROLL
    for (int e = 0; e < VW; ++e) acc = kf_row_combine(acc, v[e], RVR_IS_MAX);
  }
  acc = kf_row_reduce(acc, RVR_IS_MAX, red + ty * KF_ROW_SLOTS(TX), tx, TX);
  if (tx == 0 && row < rows) out[row] = acc;
  (void)partials;
  (void)counters;
}
