// Fixture template source for the capabilities and export tests; those tests
// read its manifest and hash it, and never compile it.
#ifndef BM
#define BM 64  // rows of C per block
#endif
#ifndef BN
#define BN 64  // columns of C per block
#endif

KF_KERNEL void KF_KERNEL_NAME(const int M, const int N, const int K, const float alpha,
                              KF_GLOBAL const kf_in_t* KF_RESTRICT A,
                              KF_GLOBAL const kf_in_t* KF_RESTRICT B, const float beta,
                              KF_GLOBAL float* KF_RESTRICT C, KF_GLOBAL const float* KF_RESTRICT bias) {
  (void)M; (void)N; (void)K; (void)alpha; (void)A; (void)B; (void)beta; (void)C; (void)bias;
}
