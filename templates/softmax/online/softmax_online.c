/* softmax_online: row-wise softmax, one work-group per row (contract:
 * generator/softmax_operator.hpp). Portable.
 *
 * Pass 1 reads the row once: each thread keeps a running maximum m and the
 * sum s of exp(x - m), rescaling s when m grows (the online normalizer);
 * -Inf elements add nothing. A local-memory tree merges the (m, s) pairs.
 * Pass 2 writes exp(x - m) / s. NaN or +Inf in the row, or a row of -Inf only,
 * give NaN everywhere in it. The partials/counters scratch is not used. */

#ifndef BLOCK
#define BLOCK 64 /* threads per work-group */
#endif
#ifndef VW
#define VW 1 /* elements per load */
#endif
#ifndef KF_KERNEL_NAME
#define KF_KERNEL_NAME softmax_online
#endif

#if (BLOCK & (BLOCK - 1))
#error "softmax_online: BLOCK must be a power of two"
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
  const int tid = KF_THREAD_X;
  const size_t row = (size_t)KF_BLOCK_Y;
  X += row * (size_t)cols;
  Y += row * (size_t)cols;

  float m = -INFINITY, s = 0.0f;
  for (int base = tid * VW; base < cols; base += BLOCK * VW) {
    float v[VW];
    if (base + VW <= cols) {
      KF_LOAD_IN_VEC(v, X, (size_t)base, VW);
      KF_UNROLL
      for (int e = 0; e < VW; ++e) kf_add(&m, &s, v[e]);
    } else {
      for (int e = 0; base + e < cols; ++e) kf_add(&m, &s, KF_LOAD_IN(X, (size_t)(base + e)));
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
  const float row_max = red_m[0];
  /* +Inf max or a -Inf-only row (sum 0): NaN by contract. */
  const float inv = (row_max == INFINITY || red_s[0] == 0.0f) ? NAN : 1.0f / red_s[0];
  for (int j = tid; j < cols; j += BLOCK) {
    const float x = KF_LOAD_IN(X, (size_t)j);
    Y[j] = (x == -INFINITY ? 0.0f : exp(x - row_max)) * inv;
  }
  (void)rows;
  (void)partials;
  (void)counters;
}
