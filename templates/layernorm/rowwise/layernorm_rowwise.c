/* layernorm_rowwise: Y = (X - mean) / sqrt(var + eps) * W + B over each row
 * of X (contract: generator/layernorm_operator.hpp). Portable: written
 * against the kforge prelude (templates/prelude/, docs/prelude.md), so it
 * runs as OpenCL C, CUDA and HIP.
 *
 * A work-group normalizes RY rows with TX threads per row (block TX x RY).
 * The threads of a row stride over it in chunks of VW consecutive elements
 * (vector loads where the chunk lies inside the row, element loads in the
 * tail) and combine their partial sums through local memory with a tree.
 * Two passes over X compute the statistics stably: the mean, then the sum
 * of squared deviations from it (no E[x^2] - mean^2 cancellation, so a
 * constant row has variance 0, never a negative one); a third pass writes
 * Y. Rows past `rows` take part in every barrier but load and store
 * nothing. */

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
#define KF_KERNEL_NAME layernorm_rowwise
#endif

#if TX < 1 || (TX & (TX - 1)) || RY < 1 || (VW != 1 && VW != 2 && VW != 4)
#error "layernorm_rowwise: invalid configuration (see the manifest's constraints)"
#endif

/* The sum of the TX partials of row group `ty` (a fixed tree, so the result
 * does not depend on timing). Every thread of the block must call it. */
KF_INLINE float lnr_row_sum(KF_LOCAL_PTR float* red, int ty, int tx, float partial) {
  red[ty * TX + tx] = partial;
  KF_BARRIER();
  for (int off = TX / 2; off > 0; off >>= 1) {
    if (tx < off) red[ty * TX + tx] += red[ty * TX + tx + off];
    KF_BARRIER();
  }
  const float total = red[ty * TX];
  KF_BARRIER(); /* red is written again by the next call */
  return total;
}

KF_KERNEL void KF_LAUNCH_BOUNDS(TX, RY, 1)
KF_KERNEL_NAME(int rows, int cols, float eps, KF_GLOBAL const kf_in_t* KF_RESTRICT X,
               KF_GLOBAL const kf_in_t* KF_RESTRICT W, KF_GLOBAL const kf_in_t* KF_RESTRICT B,
               KF_GLOBAL float* KF_RESTRICT Y) {
  KF_LOCAL float red[TX * RY];

  const int tx = KF_THREAD_X;
  const int ty = KF_THREAD_Y;
  const int row = KF_BLOCK_X * RY + ty;
  const int n = row < rows ? cols : 0; /* elements this thread's row owns */
  const size_t base = (size_t)(row < rows ? row : 0) * (size_t)cols;
  const KF_GLOBAL kf_in_t* x = X + base;

  /* Pass 1: the mean. */
  float sum = 0.0f;
  for (int c = tx * VW; c < n; c += TX * VW) {
    float v[VW];
    if (c + VW <= n) {
      KF_LOAD_IN_VEC(v, x, c, VW);
      KF_UNROLL
      for (int e = 0; e < VW; ++e) sum += v[e];
    } else {
      for (int e = 0; c + e < n; ++e) sum += KF_LOAD_IN(x, c + e);
    }
  }
  const float mean = lnr_row_sum(red, ty, tx, sum) / (float)cols;

  /* Pass 2: the variance, from deviations. */
  float sq = 0.0f;
  for (int c = tx * VW; c < n; c += TX * VW) {
    float v[VW];
    if (c + VW <= n) {
      KF_LOAD_IN_VEC(v, x, c, VW);
      KF_UNROLL
      for (int e = 0; e < VW; ++e) sq += (v[e] - mean) * (v[e] - mean);
    } else {
      for (int e = 0; c + e < n; ++e) {
        const float dev = KF_LOAD_IN(x, c + e) - mean;
        sq += dev * dev;
      }
    }
  }
  const float rstd = KF_RSQRT(lnr_row_sum(red, ty, tx, sq) / (float)cols + eps);

  /* Pass 3: the output. */
  KF_GLOBAL float* y = Y + base;
  for (int c = tx * VW; c < n; c += TX * VW) {
    float v[VW], w[VW], b[VW];
    if (c + VW <= n) {
      KF_LOAD_IN_VEC(v, x, c, VW);
      KF_LOAD_IN_VEC(w, W, c, VW);
      KF_LOAD_IN_VEC(b, B, c, VW);
      KF_UNROLL
      for (int e = 0; e < VW; ++e) y[c + e] = (v[e] - mean) * rstd * w[e] + b[e];
    } else {
      for (int e = 0; c + e < n; ++e) {
        y[c + e] = (KF_LOAD_IN(x, c + e) - mean) * rstd * KF_LOAD_IN(W, c + e) + KF_LOAD_IN(B, c + e);
      }
    }
  }
}
