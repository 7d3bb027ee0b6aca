// The convolution reference template: one work-item per output element, the
// filter loops in kf_ref_t (double where the device has it), no local memory.
#ifndef BLOCK
#define BLOCK 16  // work-items per work-group along x
#endif

KF_KERNEL void KF_KERNEL_NAME(const int image_width, const int image_height, const int filter_w,
                              const int filter_h, KF_GLOBAL kf_ref_t* KF_RESTRICT output,
                              KF_GLOBAL const kf_in_t* KF_RESTRICT input,
                              KF_GLOBAL const float* KF_RESTRICT filter) {
  const int x = KF_BLOCK_X * BLOCK + KF_THREAD_X;
  const int y = KF_BLOCK_Y;
  if (x >= image_width || y >= image_height) return;
  const int input_width = image_width + filter_w - 1;
  kf_ref_t sum = 0;
  for (int i = 0; i < filter_h; ++i)
    for (int j = 0; j < filter_w; ++j)
      sum += (kf_ref_t)KF_LOAD_IN(input, (size_t)(y + i) * input_width + (x + j)) * (kf_ref_t)filter[i * filter_w + j];
  output[(size_t)y * image_width + x] = sum;
}
