/* rmsnorm_rowwise: Y = X / sqrt(mean(X^2) + eps) * W over each row of X
 * (contract: generator/rmsnorm_operator.hpp). Portable: written against the
 * kforge prelude (templates/prelude/, docs/prelude.md), so it runs as
 * OpenCL C, CUDA and HIP.
 *
 * A work-group normalizes RY rows with TX threads per row (block TX x RY).
 * The threads of a row stride over it in chunks of VW consecutive elements
 * (vector loads where the chunk lies inside the row, element loads in the
 * tail), sum the squares, and combine their partial sums through local
 * memory with a tree; a second pass writes Y. Rows past `rows` take part in
 * every barrier but load and store nothing. */

/* ---- tunable parameters (the generator defines them; defaults for a
 * standalone build) ---- */
#ifndef TX
#define TX 64 /* threads per row, a power of two */
#endif
#ifndef RY
#define RY 2 /* rows per work-group */
#endif
#ifndef VW
#define VW 1 /* consecutive elements per load: 1, 2, 4 */
#endif

#ifndef KF_KERNEL_NAME
#define KF_KERNEL_NAME rmsnorm_rowwise
#endif

#if TX < 1 || (TX & (TX - 1)) || RY < 1 || (VW != 1 && VW != 2 && VW != 4)
#error "rmsnorm_rowwise: invalid configuration (see the manifest's constraints)"
#endif

KF_KERNEL void KF_LAUNCH_BOUNDS(TX, RY, 1)
KF_KERNEL_NAME(int rows, int cols, float eps, KF_GLOBAL const kf_in_t* KF_RESTRICT X,
               KF_GLOBAL const kf_in_t* KF_RESTRICT W, KF_GLOBAL float* KF_RESTRICT Y) {
  KF_LOCAL float red[TX * RY];

  const int tx = KF_THREAD_X;
  const int ty = KF_THREAD_Y;
  const int row = KF_BLOCK_X * RY + ty;
  const int n = row < rows ? cols : 0; /* elements this thread's row owns */
  const size_t base = (size_t)(row < rows ? row : 0) * (size_t)cols;
  const KF_GLOBAL kf_in_t* x = X + base;

  /* Pass 1: the sum of squares, then a fixed tree over the row's threads. */
  float sq = 0.0f;
  for (int c = tx * VW; c < n; c += TX * VW) {
    float v[VW];
    if (c + VW <= n) {
      KF_LOAD_IN_VEC(v, x, c, VW);
      KF_UNROLL
      for (int e = 0; e < VW; ++e) sq += v[e] * v[e];
    } else {
      for (int e = 0; c + e < n; ++e) {
        const float u = KF_LOAD_IN(x, c + e);
        sq += u * u;
      }
    }
  }
  red[ty * TX + tx] = sq;
  KF_BARRIER();
  for (int off = TX / 2; off > 0; off >>= 1) {
    if (tx < off) red[ty * TX + tx] += red[ty * TX + tx + off];
    KF_BARRIER();
  }
  const float rstd = KF_RSQRT(red[ty * TX] / (float)cols + eps);

  /* Pass 2: the output. */
  KF_GLOBAL float* y = Y + base;
  for (int c = tx * VW; c < n; c += TX * VW) {
    float v[VW], w[VW];
    if (c + VW <= n) {
      KF_LOAD_IN_VEC(v, x, c, VW);
      KF_LOAD_IN_VEC(w, W, c, VW);
      KF_UNROLL
      for (int e = 0; e < VW; ++e) y[c + e] = v[e] * rstd * w[e];
    } else {
      for (int e = 0; c + e < n; ++e) y[c + e] = KF_LOAD_IN(x, c + e) * rstd * KF_LOAD_IN(W, c + e);
    }
  }
}
