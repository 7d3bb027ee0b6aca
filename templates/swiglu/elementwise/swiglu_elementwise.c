/* swiglu_elementwise: Y = silu(gate) * up over a packed gate|up tensor X
 * (rows x 2 cols; contract: generator/swiglu_operator.hpp). Portable:
 * written against the kforge prelude (templates/prelude/, docs/prelude.md),
 * so it runs as OpenCL C, CUDA and HIP.
 *
 * A work-group serves RY rows with TX threads each; the gridDim.y groups of
 * a row (at most CHUNKS) interleave over it in steps of TX * VW elements.
 * Chunks of VW that lie inside the row use vector loads, the tail element
 * loads. Rows lie on grid x (no 65,535 limit). */

/* ---- tunable parameters (the generator defines them; defaults for a
 * standalone build) ---- */
#ifndef TX
#define TX 64 /* threads along a row */
#endif
#ifndef RY
#define RY 1 /* rows per work-group */
#endif
#ifndef VW
#define VW 4 /* consecutive elements per load: 1, 2, 4 */
#endif
#ifndef CHUNKS
#define CHUNKS 16 /* most work-groups along a row: the launch's grid y; the kernel reads the grid */
#endif

#ifndef KF_KERNEL_NAME
#define KF_KERNEL_NAME swiglu_elementwise
#endif

#if TX < 1 || RY < 1 || (VW != 1 && VW != 2 && VW != 4)
#error "swiglu_elementwise: invalid configuration (see the manifest's constraints)"
#endif

/* silu(a) * b, with silu exactly as the gemm epilogue's (the prelude's KF_EXP). */
KF_INLINE float swiglu_gate(float a, float b) { return a / (1.0f + KF_EXP(-a)) * b; }

KF_KERNEL void KF_LAUNCH_BOUNDS(TX, RY, 1)
KF_KERNEL_NAME(int rows, int cols, KF_GLOBAL const kf_in_t* KF_RESTRICT X, KF_GLOBAL float* KF_RESTRICT Y) {
  const int row = KF_BLOCK_X * RY + KF_THREAD_Y;
  if (row >= rows) return;
  const KF_GLOBAL kf_in_t* gate = X + (size_t)row * (size_t)(2 * cols);
  const KF_GLOBAL kf_in_t* up = gate + cols;
  KF_GLOBAL float* y = Y + (size_t)row * (size_t)cols;
  const int step = KF_GRID_DIM_Y * TX * VW;
  for (int c = (KF_BLOCK_Y * TX + KF_THREAD_X) * VW; c < cols; c += step) {
    if (c + VW <= cols) {
      float a[VW], b[VW];
      KF_LOAD_IN_VEC(a, gate, c, VW);
      KF_LOAD_IN_VEC(b, up, c, VW);
      KF_UNROLL
      for (int e = 0; e < VW; ++e) y[c + e] = swiglu_gate(a[e], b[e]);
    } else {
      for (int e = 0; c + e < cols; ++e) y[c + e] = swiglu_gate(KF_LOAD_IN(gate, c + e), KF_LOAD_IN(up, c + e));
    }
  }
}
