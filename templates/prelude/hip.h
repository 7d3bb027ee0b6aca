/* kforge portable prelude for HIP C++ (hipRTC): what HIP does differently
 * from CUDA. gpu.h (the part they share) and epilogue.h follow it, and
 * together they define the same names as opencl.h, so a portable template is
 * written once; reference: docs/prelude.md. Before this file the generator
 * defines the template's parameters, KF_KERNEL_NAME, KF_DTYPE_F32 |
 * KF_DTYPE_F16 | KF_DTYPE_BF16, KF_DTYPE_BYTES and the operator's macros
 * (KF_TRANS_A / KF_TRANS_B, KF_BIAS, KF_ACTIVATION). hipRTC provides the HIP
 * runtime's device declarations (threadIdx, __syncthreads, math); 16-bit
 * inputs are converted with clang's _Float16 and bit shifts. */
#ifndef KF_PRELUDE_H
#define KF_PRELUDE_H

#define KF_BACKEND_HIP 1

/* Dynamic shared memory (LDS) a kernel launches with: KF_DYNAMIC_SHARED_BYTES(n)
 * at file scope records n in the module, read by the backend at load time. */
#define KF_DYNAMIC_SHARED_BYTES(n) extern "C" __device__ int kf_dynamic_shared_bytes = (n);

/* ---- OpenCL C's infinity and NaN, which portable templates may use ---- */
#ifndef INFINITY
#define INFINITY __builtin_inff()
#endif
#ifndef NAN
#define NAN __builtin_nanf("")
#endif

/* ---- 16-bit input bits to float (gpu.h's loads call these) ---- */
__device__ __forceinline__ float kf_f16_to_f32(unsigned short h) { return (float)__builtin_bit_cast(_Float16, h); }
__device__ __forceinline__ float kf_bf16_to_f32(unsigned short b) {
  return __builtin_bit_cast(float, (unsigned)b << 16);
}

/* Lane (lane ^ m)'s float v, every lane of the warp taking part (gpu.h). */
#define KF_SHUFFLE_XOR(v, m) __shfl_xor((v), (m))

#endif /* KF_PRELUDE_H */
