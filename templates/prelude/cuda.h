/* kforge portable prelude for CUDA C++ (NVRTC): what CUDA does differently
 * from HIP. gpu.h (the part they share) and epilogue.h follow it, and
 * together they define the same names as opencl.h, so a portable template is
 * written once; reference: docs/prelude.md. Before this file the generator
 * defines the template's parameters, KF_KERNEL_NAME, KF_DTYPE_F32 |
 * KF_DTYPE_F16 | KF_DTYPE_BF16, KF_DTYPE_BYTES and the operator's macros
 * (KF_TRANS_A / KF_TRANS_B, KF_BIAS, KF_ACTIVATION). No CUDA headers are
 * included: NVRTC compiles it without an include path (size_t is built in),
 * and 16-bit inputs are converted with PTX. */
#ifndef KF_PRELUDE_H
#define KF_PRELUDE_H

#define KF_BACKEND_CUDA 1

/* Dynamic shared memory a kernel launches with (target-specific templates):
 * KF_DYNAMIC_SHARED_BYTES(n) at file scope records n in the module, where the
 * backend reads it at load time and raises the kernel's limit above 48 KB. */
#define KF_DYNAMIC_SHARED_BYTES(n) extern "C" __device__ int kf_dynamic_shared_bytes = (n);

/* ---- OpenCL C's infinity and NaN, which portable templates may use ---- */
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif

/* ---- 16-bit input bits to float (gpu.h's loads call these) ---- */
__device__ __forceinline__ float kf_f16_to_f32(unsigned short h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
__device__ __forceinline__ float kf_bf16_to_f32(unsigned short b) { return __uint_as_float((unsigned)b << 16); }

/* Lane (lane ^ m)'s float v, every lane of the warp taking part (gpu.h). */
#define KF_SHUFFLE_XOR(v, m) __shfl_xor_sync(0xffffffffu, (v), (m))

#endif /* KF_PRELUDE_H */
