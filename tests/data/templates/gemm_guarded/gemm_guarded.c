// Naive GEMM, one thread per element of C, for tests of the tuner and the
// runtime, with the gemm contract's epilogue (generator/gemm_operator.hpp).
// Copy of gemm_naive_planted behind an architecture guard no CPU device meets (tests of guard skipping).
#ifndef BX
#define BX 8  // threads per block along N
#endif
#ifndef BY
#define BY 4  // threads per block along M
#endif
#ifndef FLAW
#define FLAW 0  // 1 plants the bug
#endif

KF_KERNEL void KF_KERNEL_NAME(const int M, const int N, const int K, const float alpha,
                              KF_GLOBAL const kf_in_t* KF_RESTRICT A,
                              KF_GLOBAL const kf_in_t* KF_RESTRICT B, const float beta,
                              KF_GLOBAL float* KF_RESTRICT C, KF_GLOBAL const float* KF_RESTRICT bias) {
  const int j = KF_BLOCK_X * BX + KF_THREAD_X;
  const int i = KF_BLOCK_Y * BY + KF_THREAD_Y;
  const int b = KF_BLOCK_Z;
  if (i >= M || j >= N) return;
  const long a0 = (long)b * M * K, b0 = (long)b * K * N, c0 = (long)b * M * N;
  float acc = 0.0f;
  for (int k = 0; k < K - FLAW; ++k) {
    const float a = KF_TRANS_A ? KF_LOAD_IN(A, a0 + (long)k * M + i) : KF_LOAD_IN(A, a0 + (long)i * K + k);
    const float w = KF_TRANS_B ? KF_LOAD_IN(B, b0 + (long)j * K + k) : KF_LOAD_IN(B, b0 + (long)k * N + j);
    acc += a * w;
  }
  const long c = c0 + (long)i * N + j;
  float out = beta == 0.0f ? alpha * acc : alpha * acc + beta * C[c];
#if KF_BIAS
  out += bias[j];
#endif
  C[c] = kf_activation(out);
}
