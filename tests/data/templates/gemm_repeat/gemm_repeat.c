// Naive GEMM, one thread per element of C, for tests of the evaluation
// order: the dot product is computed REP times (the result is the last one,
// the same each time), so REP=8 takes about 8 times as long as REP=1.
#ifndef BX
#define BX 8  // threads per block along N
#endif
#ifndef REP
#define REP 8  // times the dot product is computed
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
  for (int r = 0; r < REP; ++r) {
    // Each round starts from the last one's sum times zero, which the
    // compiler may not fold to 0 (NaN and infinity), so every round runs.
    float sum = acc * 0.0f;
    for (int k = 0; k < K; ++k) sum += KF_LOAD_IN(A, a0 + (long)i * K + k) * KF_LOAD_IN(B, b0 + (long)k * N + j);
    acc = sum;
  }
  const long c = c0 + (long)i * N + j;
  float out = beta == 0.0f ? alpha * acc : alpha * acc + beta * C[c];
#if KF_BIAS
  out += bias[j];
#endif
  C[c] = kf_activation(out);
}
