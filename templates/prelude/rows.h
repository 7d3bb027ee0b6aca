/* kforge prelude, the part every backend shares: loading and reducing the
 * rows of row-wise templates. prelude_text() appends this file to every backend's prelude,
 * which defines what it reads: KF_INLINE, KF_LOCAL_PTR, KF_BARRIER, the
 * shuffle (KF_HAS_SHUFFLE, KF_SHUFFLE_LANES, KF_SHUFFLE_XOR) and the input
 * loads (KF_LOAD_IN, KF_LOAD_IN_VEC_ALIGNED).
 * Reference: docs/prelude.md. */
#ifndef KF_ROWS_H
#define KF_ROWS_H

/* A row is n threads (a power of two) with consecutive x indices starting
 * at a multiple of n, as in a TX x RY block. Where the backend shuffles,
 * each warp-sized part of the row reduces in shuffles and leaves one
 * partial in local memory; elsewhere the row reduces in a local-memory
 * tree. KF_ROW_SLOTS(n) is the floats of local memory a row needs. */
#if KF_HAS_SHUFFLE
#define KF_ROW_LANES(n) ((n) < KF_SHUFFLE_LANES ? (n) : KF_SHUFFLE_LANES)
#define KF_ROW_SLOTS(n) ((n) / KF_ROW_LANES(n))
#else
#define KF_ROW_SLOTS(n) (n)
#endif

/* KF_LOAD_ROW_CHUNK(dst, p, c, n, vw, aligned, pad): dst[0..vw) = p[c ..
 * c+vw) as float for a row of n elements, `pad` past its end: one vector
 * load where `aligned` (n is a multiple of vw) and the chunk is whole,
 * element loads otherwise. vw is 1, 2, 4 or 8. */
#define KF_LOAD_ROW_CHUNK(dst, p, c, n, vw, aligned, pad)                                  \
  do {                                                                                     \
    if ((aligned) && (c) + (vw) <= (n)) {                                                  \
      KF_LOAD_IN_VEC_ALIGNED(dst, p, c, vw);                                               \
    } else {                                                                               \
      _Pragma("unroll") for (int kf_e_ = 0; kf_e_ < (vw); ++kf_e_)                         \
        (dst)[kf_e_] = (c) + kf_e_ < (n) ? KF_LOAD_IN(p, (c) + kf_e_) : (pad);             \
    }                                                                                      \
  } while (0)

KF_INLINE float kf_row_combine(float a, float b, int is_max) {
  /* A maximum propagates NaN, as a sum does: once a is NaN it stays, and a NaN b replaces a. */
  return is_max ? ((a == a && (b > a || b != b)) ? b : a) : a + b;
}

/* The sum (is_max 0) or the maximum (is_max 1) of s over the n threads of a
 * row, in every one of them: t is the thread's index in its row (0..n-1),
 * red the row's KF_ROW_SLOTS(n) floats of local memory. Every thread of the
 * work-group calls it together (it holds a barrier unless the row fits one
 * warp). The final reads come after the last barrier, so a second call
 * needs a `red` of its own. */
KF_INLINE float kf_row_reduce(float s, int is_max, KF_LOCAL_PTR float* red, int t, int n) {
#if KF_HAS_SHUFFLE
  for (int m = KF_ROW_LANES(n) / 2; m > 0; m >>= 1) s = kf_row_combine(s, KF_SHUFFLE_XOR(s, m), is_max);
  if (KF_ROW_SLOTS(n) == 1) return s;
  if (t % KF_ROW_LANES(n) == 0) red[t / KF_ROW_LANES(n)] = s;
  KF_BARRIER();
  s = red[0];
  for (int i = 1; i < KF_ROW_SLOTS(n); ++i) s = kf_row_combine(s, red[i], is_max);
#else
  red[t] = s;
  KF_BARRIER();
  for (int off = n / 2; off > 0; off >>= 1) {
    if (t < off) red[t] = kf_row_combine(red[t], red[t + off], is_max);
    KF_BARRIER();
  }
  s = red[0];
#endif
  return s;
}

KF_INLINE float kf_row_sum(float s, KF_LOCAL_PTR float* red, int t, int n) { return kf_row_reduce(s, 0, red, t, n); }
KF_INLINE float kf_row_max(float s, KF_LOCAL_PTR float* red, int t, int n) { return kf_row_reduce(s, 1, red, t, n); }

#endif /* KF_ROWS_H */
