// The saxpy reference template: one thread per element, trusted to validate
// the tuned template (operator.json's reference.template in the tests). It
// computes in kf_ref_t: double where the device has it.
#ifndef BLOCK
#define BLOCK 1  // threads per block
#endif

KF_KERNEL void KF_KERNEL_NAME(const int n, const float a, KF_GLOBAL const kf_in_t* KF_RESTRICT x,
                              KF_GLOBAL kf_ref_t* KF_RESTRICT y) {
  const int i = KF_BLOCK_X * BLOCK + KF_THREAD_X;
  if (i < n) y[i] = (kf_ref_t)a * (kf_ref_t)KF_LOAD_IN(x, i) + y[i];
}
