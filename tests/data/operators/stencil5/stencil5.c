// A 5-point stencil over an (H+2) x (W+2) input with a one-element halo:
// Y[i][j] = 0.5 X[i+1][j+1] - 0.125 (X[i][j+1] + X[i+2][j+1] + X[i+1][j] + X[i+1][j+2]).
// BX x BY threads per block, so H and W leave tails in both dimensions.
// FLAW=1 reads the west neighbour one column too far: validation must catch it.
#ifndef BX
#define BX 8  // threads per block along W
#endif
#ifndef BY
#define BY 4  // threads per block along H
#endif
#ifndef FLAW
#define FLAW 0  // 1 plants the bug
#endif

KF_KERNEL void KF_KERNEL_NAME(const int H, const int W, KF_GLOBAL const kf_in_t* KF_RESTRICT X,
                              KF_GLOBAL float* KF_RESTRICT Y) {
  const int j = KF_BLOCK_X * BX + KF_THREAD_X;
  const int i = KF_BLOCK_Y * BY + KF_THREAD_Y;
  if (i >= H || j >= W) return;
  const int pitch = W + 2;
  const int c = (i + 1) * pitch + (j + 1);
  const float around = KF_LOAD_IN(X, c - pitch) + KF_LOAD_IN(X, c + pitch) + KF_LOAD_IN(X, c - 1 + FLAW) +
                       KF_LOAD_IN(X, c + 1);
  Y[i * W + j] = 0.5f * KF_LOAD_IN(X, c) - 0.125f * around;
}
