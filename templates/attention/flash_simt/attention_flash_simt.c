/* attention_flash_simt: O = softmax(scale * Q K^T + mask) V in one pass over
 * the keys with an online softmax (flash-style), f32 accumulation (contract:
 * generator/attention_operator.hpp). Portable: written against the kforge
 * prelude (templates/prelude/, docs/prelude.md), so it runs as OpenCL C,
 * CUDA and HIP.
 *
 * A work-group of NT threads owns BQ queries of one (batch, head): grid x is
 * the query block, y the head, z the batch. The Q tile (BQ x HD, zero past S
 * and D) is staged in local memory once. Then, for each block of BKV keys:
 *   1. K and V tiles (BKV x HD, zero past SK and D) are staged in local memory;
 *   2. the BQ x BKV scores, each a length-HD dot product, are spread over the
 *      threads, SC_PER = BQ*BKV/NT each, accumulated in registers over d
 *      (consecutive threads take consecutive keys; the K tile rows are
 *      padded by KPAD floats against bank conflicts);
 *   3. one thread per query updates its running maximum m and sum l, turns
 *      the scores into p = exp(s - m_new) (0 where the key is masked or past
 *      SK) and records the rescale factor alpha = exp(m_old - m_new);
 *   4. every thread rescales its slice of the BQ x HD output accumulator
 *      (registers: AC_PER = BQ*HD/NT floats, consecutive threads on
 *      consecutive d) by alpha and adds p V, key by key.
 * UNR chooses whether the loops over those per-thread arrays are unrolled.
 * The output is acc / l. HD is the head-dimension capacity: any D <= HD
 * works (zero padding), so one instance serves D = 64 and D = 128 with
 * HD = 128, and D <= 64 more cheaply with HD = 64. Under the causal mask
 * (KF_MASK_CAUSAL), query i sees keys j <= i + (SK - S), key blocks past the
 * work-group's last visible key are skipped, and a masked key's V never
 * enters a sum (so a NaN there cannot leak). */

/* ---- tunable parameters (the generator defines them; defaults for a
 * standalone build) ---- */
#ifndef BQ
#define BQ 16 /* queries per work-group */
#endif
#ifndef BKV
#define BKV 16 /* keys per step */
#endif
#ifndef NT
#define NT 64 /* threads per work-group */
#endif
#ifndef HD
#define HD 128 /* head-dimension capacity: D <= HD */
#endif
#ifndef KPAD
#define KPAD 1 /* extra floats per row of the staged K tile */
#endif
#ifndef UNR
#define UNR 1 /* 1: unroll the loops over per-thread arrays, so that they stay in registers */
#endif

#ifndef KF_KERNEL_NAME
#define KF_KERNEL_NAME attention_flash_simt
#endif

/* ---- derived ---- */
#define KS_LD (HD + KPAD)         /* Ks[key][d] */
#define SC_PER ((BQ * BKV) / NT)  /* scores per thread per key block */
#define AC_PER ((BQ * HD) / NT)   /* output elements per thread */
#define ATT_NEG_BIG (-3.0e38f)    /* the running maximum before any key */

#if NT < BQ || ((BQ * BKV) % NT) || ((BQ * HD) % NT)
#error "attention_flash_simt: invalid configuration (see the manifest's constraints)"
#endif

/* Unrolled, the per-thread accumulators live in registers on GPUs; left to
 * the compiler, PoCL builds an instance several times faster. */
#if UNR
#define ATT_UNROLL KF_UNROLL
#else
#define ATT_UNROLL
#endif

#if defined(KF_BACKEND_OPENCL)
#define ATT_EXP(x) exp(x)
#else
#define ATT_EXP(x) expf(x)
#endif

KF_KERNEL void KF_LAUNCH_BOUNDS(NT, 1, 1)
KF_KERNEL_NAME(int B, int H, int S, int SK, int D, float scale, KF_GLOBAL const kf_in_t* KF_RESTRICT Q,
               KF_GLOBAL const kf_in_t* KF_RESTRICT K, KF_GLOBAL const kf_in_t* KF_RESTRICT V,
               KF_GLOBAL float* KF_RESTRICT O) {
  KF_LOCAL float Qs[BQ * HD];
  KF_LOCAL float Ks[BKV * KS_LD];
  KF_LOCAL float Vs[BKV * HD];
  KF_LOCAL float Ps[BQ * BKV];
  KF_LOCAL float m_s[BQ];     /* running maximum per query */
  KF_LOCAL float l_s[BQ];     /* running sum of exp(s - m) per query */
  KF_LOCAL float alpha_s[BQ]; /* this step's rescale factor per query */

  const int tid = KF_THREAD_X;
  const int q0 = KF_BLOCK_X * BQ;
  const size_t head = (size_t)KF_BLOCK_Z * (size_t)H + (size_t)KF_BLOCK_Y;
  (void)B;
  Q += head * (size_t)S * (size_t)D;
  K += head * (size_t)SK * (size_t)D;
  V += head * (size_t)SK * (size_t)D;
  O += head * (size_t)S * (size_t)D;
  const int offset = SK - S; /* causal: query i sees keys j <= i + offset */
  (void)offset;

  for (int e = tid; e < BQ * HD; e += NT) {
    const int r = e / HD, c = e % HD;
    Qs[e] = (q0 + r < S && c < D) ? KF_LOAD_IN(Q, (size_t)(q0 + r) * (size_t)D + (size_t)c) : 0.0f;
  }
  if (tid < BQ) {
    m_s[tid] = ATT_NEG_BIG;
    l_s[tid] = 0.0f;
  }
  float acc[AC_PER];
  ATT_UNROLL
  for (int i = 0; i < AC_PER; ++i) acc[i] = 0.0f;

#if defined(KF_MASK_CAUSAL)
  /* The block's last query, q0 + BQ - 1, sees keys up to q0 + BQ - 1 + offset. */
  const int kv_end = q0 + BQ + offset < SK ? q0 + BQ + offset : SK;
#else
  const int kv_end = SK;
#endif

  for (int k0 = 0; k0 < kv_end; k0 += BKV) {
    KF_BARRIER(); /* the previous step is done with Ks, Vs and Ps */
    for (int e = tid; e < BKV * HD; e += NT) {
      const int r = e / HD, c = e % HD;
      const int in = k0 + r < SK && c < D;
      const size_t g = (size_t)(k0 + r) * (size_t)D + (size_t)c;
      Ks[r * KS_LD + c] = in ? KF_LOAD_IN(K, g) : 0.0f;
      Vs[r * HD + c] = in ? KF_LOAD_IN(V, g) : 0.0f;
    }
    KF_BARRIER();

    /* 2. scores: the d loop outside, so the SC_PER dot products stay in registers */
    {
      float dot[SC_PER];
      ATT_UNROLL
      for (int i = 0; i < SC_PER; ++i) dot[i] = 0.0f;
      for (int c = 0; c < HD; ++c) {
        ATT_UNROLL
        for (int i = 0; i < SC_PER; ++i) {
          const int e = tid + i * NT;
          dot[i] += Qs[(e / BKV) * HD + c] * Ks[(e % BKV) * KS_LD + c];
        }
      }
      ATT_UNROLL
      for (int i = 0; i < SC_PER; ++i) Ps[tid + i * NT] = dot[i] * scale;
    }
    KF_BARRIER();

    /* 3. online softmax, one thread per query */
    if (tid < BQ) {
      const int r = tid;
#if defined(KF_MASK_CAUSAL)
      const int last = q0 + r + offset < SK - 1 ? q0 + r + offset : SK - 1; /* last visible key */
#else
      const int last = SK - 1;
#endif
      const float m_old = m_s[r];
      float m_new = m_old;
      for (int j = 0; j < BKV; ++j) {
        const float s = Ps[r * BKV + j];
        if (k0 + j <= last && s > m_new) m_new = s;
      }
      float sum = 0.0f;
      for (int j = 0; j < BKV; ++j) {
        const float p = k0 + j <= last ? ATT_EXP(Ps[r * BKV + j] - m_new) : 0.0f;
        Ps[r * BKV + j] = p;
        sum += p;
      }
      const float alpha = ATT_EXP(m_old - m_new);
      l_s[r] = l_s[r] * alpha + sum;
      m_s[r] = m_new;
      alpha_s[r] = alpha;
    }
    KF_BARRIER();

    /* 4. acc = acc * alpha + P V: the key loop outside, the AC_PER
     * accumulators (registers) inside */
    ATT_UNROLL
    for (int i = 0; i < AC_PER; ++i) acc[i] *= alpha_s[(tid + i * NT) / HD];
    for (int j = 0; j < BKV; ++j) {
      ATT_UNROLL
      for (int i = 0; i < AC_PER; ++i) {
        const int e = tid + i * NT;
        const int r = e / HD, c = e % HD;
        const float pv = Ps[r * BKV + j] * Vs[j * HD + c];
#if defined(KF_MASK_CAUSAL)
        /* A masked key holds p = 0, but its V may be NaN: leave it out. */
        acc[i] += k0 + j <= q0 + r + offset ? pv : 0.0f;
#else
        acc[i] += pv;
#endif
      }
    }
  }

  ATT_UNROLL
  for (int i = 0; i < AC_PER; ++i) {
    const int e = tid + i * NT;
    const int r = e / HD, c = e % HD;
    if (q0 + r < S && c < D) O[(size_t)(q0 + r) * (size_t)D + (size_t)c] = acc[i] / l_s[r];
  }
}
