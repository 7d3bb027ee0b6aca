// Naive GEMM, one thread per element of C, for the tuner's validation tests.
// RC=1 computes alpha * acc + beta * C even when beta is 0: right
// whenever C holds numbers (the accumulate run), wrong when C holds NaN (the
// poisoned-output run, which the tuner times as well).
#ifndef BX
#define BX 8  // threads per block along N
#endif
#ifndef RC
#define RC 0  // 1 plants the bug
#endif

KF_KERNEL void KF_KERNEL_NAME(const int M, const int N, const int K, const float alpha,
                              KF_GLOBAL const kf_in_t* KF_RESTRICT A,
                              KF_GLOBAL const kf_in_t* KF_RESTRICT B, const float beta,
                              KF_GLOBAL float* KF_RESTRICT C, KF_GLOBAL const float* KF_RESTRICT bias) {
  const int j = KF_BLOCK_X * BX + KF_THREAD_X;
  const int i = KF_BLOCK_Y * 4 + KF_THREAD_Y;
  const int b = KF_BLOCK_Z;
  if (i >= M || j >= N) return;
  const long a0 = (long)b * M * K, b0 = (long)b * K * N, c0 = (long)b * M * N;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += KF_LOAD_IN(A, a0 + (long)i * K + k) * KF_LOAD_IN(B, b0 + (long)k * N + j);
  const long c = c0 + (long)i * N + j;
  float out = (RC || beta != 0.0f) ? alpha * acc + beta * C[c] : alpha * acc;
#if KF_BIAS
  out += bias[j];
#endif
  C[c] = kf_activation(out);
}
