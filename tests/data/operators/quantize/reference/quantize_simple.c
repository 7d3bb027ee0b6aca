// The quantize reference template: one thread per element, computing in
// kf_ref_t (double where the device has it); h is the unrounded value.
#ifndef BLOCK
#define BLOCK 1  // threads per block
#endif

KF_KERNEL void KF_KERNEL_NAME(const int n, const float inv_scale, KF_GLOBAL const int* KF_RESTRICT perm,
                              KF_GLOBAL const float* KF_RESTRICT x, KF_GLOBAL kf_ref_t* KF_RESTRICT q,
                              KF_GLOBAL kf_ref_t* KF_RESTRICT h) {
  const int i = KF_BLOCK_X * BLOCK + KF_THREAD_X;
  if (i >= n) return;
  const kf_ref_t v = x[min(perm[i], n - 1)];
  q[i] = rint(clamp(v * (kf_ref_t)inv_scale, (kf_ref_t)-127, (kf_ref_t)127));
  h[i] = v;
}
