/* softmax_split_row: row-wise softmax with SPLIT work-groups per row (contract:
 * generator/softmax_operator.hpp). Portable.
 *
 * Work-group (row, part) owns chunk `part` of the row (whole VW vectors; the
 * last chunks may be short or empty). Pass 1 reads the chunk once keeping a
 * running (m, s) per thread, s the sum of exp(x - m) (the online normalizer);
 * a local-memory tree gives the chunk's (cm, cs). Pass 2 writes the
 * unnormalized exp(x - cm) of the chunk to Y. Thread 0 stores (cm, cs) in
 * partials[row * 2 * MAX_SPLIT + {0, MAX_SPLIT} + part]; every thread fences
 * its Y writes, and thread 0 takes a ticket on counters[row]. The group that
 * draws the last ticket merges the SPLIT pairs in chunk order (deterministic)
 * into the row's (M, S), then multiplies chunk q of Y by
 * exp(cm_q - M) / S and resets the counter to zero. No group ever waits for
 * another, so nothing assumes the groups of a row run at the same time.
 *
 * Rounding: exp(x - cm) * exp(cm - M) carries one more exp and product than
 * exp(x - M), and the rounded arguments telescope (|x - cm| + |cm - M| =
 * |x - M|), within docs/tolerances.md's softmax bound.
 * Special values: NaN or +Inf in the row, or a row of -Inf only, make the
 * factor NaN for every chunk; -Inf elements of other rows give exactly 0. */

#ifndef SPLIT
#define SPLIT 8 /* work-groups per row */
#endif
#ifndef BLOCK
#define BLOCK 64 /* threads per work-group */
#endif
#ifndef VW
#define VW 1 /* elements per load in pass 1 */
#endif
#ifndef KF_KERNEL_NAME
#define KF_KERNEL_NAME softmax_split_row
#endif

#define MAX_SPLIT 64 /* kSoftmaxMaxSplit: partial pairs per row */

#if (BLOCK & (BLOCK - 1)) || SPLIT < 1 || SPLIT > MAX_SPLIT
#error "softmax_split_row: BLOCK must be a power of two and 1 <= SPLIT <= 64"
#endif

/* Merges (m2, s2) into (m, s); NaN sums propagate. */
KF_INLINE void kf_merge(float* m, float* s, float m2, float s2) {
  if (m2 > *m) {
    *s = *s * exp(*m - m2) + s2;
    *m = m2;
  } else if (m2 != -INFINITY) {
    *s += s2 * exp(m2 - *m);
  } else if (s2 != s2) {
    *s = s2;
  }
}

KF_INLINE void kf_add(float* m, float* s, float x) {
  if (x > *m) {
    *s = *s * exp(*m - x) + 1.0f;
    *m = x;
  } else if (x != -INFINITY) {
    *s += exp(x - *m); /* NaN x gives a NaN sum; x == m == +Inf too */
  }
}

KF_KERNEL void KF_LAUNCH_BOUNDS(BLOCK, 1, 1)
KF_KERNEL_NAME(int rows, int cols, KF_GLOBAL const kf_in_t* KF_RESTRICT X, KF_GLOBAL float* KF_RESTRICT Y,
               KF_GLOBAL float* partials, KF_GLOBAL int* counters) {
  KF_LOCAL float red_m[BLOCK];
  KF_LOCAL float red_s[BLOCK];
  KF_LOCAL float factor[SPLIT];
  KF_LOCAL int is_last[1];
  const int tid = KF_THREAD_X;
  const int row = KF_BLOCK_X;
  const int part = KF_BLOCK_Y;
  X += (size_t)row * (size_t)cols;
  Y += (size_t)row * (size_t)cols;
  /* Chunks are whole vectors so that every full load stays inside one chunk. */
  const int chunk = (((cols + SPLIT - 1) / SPLIT + VW - 1) / VW) * VW;
  const int begin = min(cols, part * chunk);
  const int end = min(cols, begin + chunk);

  /* Pass 1: the chunk's (max, sum of exp(x - max)). */
  float m = -INFINITY, s = 0.0f;
  for (int base = begin + tid * VW; base < end; base += BLOCK * VW) {
    float v[VW];
    if (base + VW <= end) {
      KF_LOAD_IN_VEC(v, X, (size_t)base, VW);
      KF_UNROLL
      for (int e = 0; e < VW; ++e) kf_add(&m, &s, v[e]);
    } else {
      for (int e = 0; base + e < end; ++e) kf_add(&m, &s, KF_LOAD_IN(X, (size_t)(base + e)));
    }
  }
  red_m[tid] = m;
  red_s[tid] = s;
  KF_BARRIER();
  for (int h = BLOCK / 2; h > 0; h >>= 1) {
    if (tid < h) {
      float mm = red_m[tid], ss = red_s[tid];
      kf_merge(&mm, &ss, red_m[tid + h], red_s[tid + h]);
      red_m[tid] = mm;
      red_s[tid] = ss;
    }
    KF_BARRIER();
  }
  const float cm = red_m[0];

  /* Pass 2: unnormalized exp(x - cm); the last group scales it. */
  for (int j = begin + tid; j < end; j += BLOCK) {
    const float x = KF_LOAD_IN(X, (size_t)j);
    Y[j] = x == -INFINITY ? 0.0f : exp(x - cm);
  }
  KF_GLOBAL float* pair = partials + (size_t)row * (2 * MAX_SPLIT);
  if (tid == 0) {
    pair[part] = cm;
    pair[MAX_SPLIT + part] = red_s[0];
  }
  KF_GLOBAL_FENCE(); /* every thread: its Y (thread 0: the pair) before the ticket */
  KF_BARRIER();
  if (tid == 0) is_last[0] = KF_ATOMIC_INC(&counters[row]) == SPLIT - 1;
  KF_BARRIER();
  if (!is_last[0]) return;

  /* The last group: merge the pairs in chunk order, then rescale the row. */
  KF_GLOBAL_FENCE();
  KF_GLOBAL volatile float* p = pair;
  if (tid == 0) {
    float rm = -INFINITY, rs = 0.0f;
    for (int q = 0; q < SPLIT; ++q) kf_merge(&rm, &rs, p[q], p[MAX_SPLIT + q]);
    red_m[0] = rm;
    red_s[0] = rs;
    counters[row] = 0;
  }
  KF_BARRIER();
  const float row_max = red_m[0], row_sum = red_s[0];
  /* +Inf max or a -Inf-only row (sum 0): NaN by contract; a NaN sum stays NaN. */
  const int nan_row = row_max == INFINITY || row_sum == 0.0f;
  for (int q = tid; q < SPLIT; q += BLOCK) {
    const float pm = p[q];
    factor[q] = nan_row ? NAN : (pm == -INFINITY ? 0.0f : exp(pm - row_max)) / row_sum;
  }
  KF_BARRIER();
  KF_GLOBAL volatile float* y = Y;
  for (int q = 0; q < SPLIT; ++q) {
    const float f = factor[q];
    const int qe = min(cols, (q + 1) * chunk);
    for (int j = q * chunk + tid; j < qe; j += BLOCK) y[j] = y[j] * f;
  }
  (void)rows;
}
