/* kforge prelude, the part CUDA and HIP share: appended to cuda.h or hip.h
 * (which define what differs: the backend macro, INFINITY and NAN, the 16-bit
 * conversions, the shuffle and dynamic shared memory), before epilogue.h.
 * Reference: docs/prelude.md. */
#ifndef KF_PRELUDE_GPU_H
#define KF_PRELUDE_GPU_H

typedef unsigned short ushort;
typedef unsigned int uint;

/* ---- qualifiers ---- */
#define KF_KERNEL extern "C" __global__
#define KF_GLOBAL
#define KF_LOCAL __shared__ /* declares a shared array at kernel scope */
#define KF_LOCAL_PTR        /* a pointer into shared memory needs no qualifier */
#define KF_RESTRICT __restrict__
#define KF_INLINE __device__ __forceinline__ /* not static: no unused-function warnings */
/* Threads per block the kernel is always launched with; after the return type. */
#define KF_LAUNCH_BOUNDS(x, y, z) __launch_bounds__((x) * (y) * (z))
#define KF_UNROLL _Pragma("unroll")

/* ---- thread and block indices, as int ---- */
#define KF_THREAD_X ((int)threadIdx.x)
#define KF_THREAD_Y ((int)threadIdx.y)
#define KF_THREAD_Z ((int)threadIdx.z)
#define KF_BLOCK_X ((int)blockIdx.x)
#define KF_BLOCK_Y ((int)blockIdx.y)
#define KF_BLOCK_Z ((int)blockIdx.z)
#define KF_BLOCK_DIM_X ((int)blockDim.x)
#define KF_BLOCK_DIM_Y ((int)blockDim.y)
#define KF_BLOCK_DIM_Z ((int)blockDim.z)
#define KF_GRID_DIM_X ((int)gridDim.x)
#define KF_GRID_DIM_Y ((int)gridDim.y)
#define KF_GRID_DIM_Z ((int)gridDim.z)

/* Block-wide barrier; orders shared and global memory within the block. */
#define KF_BARRIER() __syncthreads()

/* ---- cross-block combining (the last-block-done pattern) ---- */
/* Atomically increments the global int *p and returns its old value. */
#define KF_ATOMIC_INC(p) atomicAdd((p), 1)
/* Orders this thread's global writes, device-wide, before its later global
 * accesses (write partial; fence; take the ticket; the last block fences, then reads). */
#define KF_GLOBAL_FENCE() __threadfence()

/* ---- OpenCL C's float constants (INFINITY and NAN come from cuda.h or
 * hip.h), which portable templates may use ---- */
#ifndef FLT_MAX
#define FLT_MAX 3.402823466e+38f
#endif

/* ---- input dtype: storage type and loads through float ---- */
#define KF_CAT_(a, b) a##b
#define KF_CAT(a, b) KF_CAT_(a, b)

#if defined(KF_DTYPE_F16)
typedef unsigned short kf_in_t; /* IEEE binary16 bits */
#define KF_IN_BITS_TO_F32(u) kf_f16_to_f32(u)
#define KF_LOAD_IN(p, i) kf_f16_to_f32((p)[(i)])
#elif defined(KF_DTYPE_BF16)
typedef unsigned short kf_in_t; /* bfloat16 bits: the high half of an f32 */
#define KF_IN_BITS_TO_F32(u) kf_bf16_to_f32(u)
#define KF_LOAD_IN(p, i) kf_bf16_to_f32((p)[(i)])
#else
#ifndef KF_DTYPE_F32
#define KF_DTYPE_F32 1
#endif
typedef float kf_in_t;
#define KF_LOAD_IN(p, i) ((float)(p)[(i)])
#endif

/* KF_LOAD_IN_VEC(dst, ptr, idx, n): dst[0..n) = (float)ptr[idx .. idx+n) for
 * n in 1, 2, 4, 8. Element loads: CUDA and HIP vector types need natural alignment,
 * which an arbitrary idx does not give; the compiler merges what it can. */
#define KF_LOAD_IN_VEC_N_(d, p, i, n)                              \
  do {                                                             \
    _Pragma("unroll") for (int kf_e_ = 0; kf_e_ < (n); ++kf_e_)    \
      (d)[kf_e_] = KF_LOAD_IN(p, (i) + kf_e_);                     \
  } while (0)
#define KF_LOAD_IN_VEC_1(d, p, i) ((d)[0] = KF_LOAD_IN(p, i))
#define KF_LOAD_IN_VEC_2(d, p, i) KF_LOAD_IN_VEC_N_(d, p, i, 2)
#define KF_LOAD_IN_VEC_4(d, p, i) KF_LOAD_IN_VEC_N_(d, p, i, 4)
#define KF_LOAD_IN_VEC_8(d, p, i) KF_LOAD_IN_VEC_N_(d, p, i, 8)
#define KF_LOAD_IN_VEC(dst, ptr, idx, n) KF_CAT(KF_LOAD_IN_VEC_, n)(dst, ptr, idx)

/* KF_LOAD_IN_VEC_ALIGNED(dst, ptr, idx, n): as KF_LOAD_IN_VEC, through n-element
 * vector loads (16 bytes at most per load: 8 x f16/bf16, 4 x f32); ptr + idx
 * must be aligned to n elements. */
#if defined(KF_DTYPE_F16) || defined(KF_DTYPE_BF16)
KF_INLINE void kf_unpack_in2(float* d, unsigned w) {
  d[0] = KF_IN_BITS_TO_F32((unsigned short)(w & 0xffffu));
  d[1] = KF_IN_BITS_TO_F32((unsigned short)(w >> 16));
}
#define KF_LOAD_IN_VEC_ALIGNED_2(d, p, i) kf_unpack_in2((d), *(const unsigned*)((p) + (i)))
#define KF_LOAD_IN_VEC_ALIGNED_4(d, p, i)                        \
  do {                                                           \
    const uint2 kf_w_ = *(const uint2*)((p) + (i));              \
    kf_unpack_in2((d), kf_w_.x);                                 \
    kf_unpack_in2((d) + 2, kf_w_.y);                             \
  } while (0)
#define KF_LOAD_IN_VEC_ALIGNED_8(d, p, i)                        \
  do {                                                           \
    const uint4 kf_w_ = *(const uint4*)((p) + (i));              \
    kf_unpack_in2((d), kf_w_.x);                                 \
    kf_unpack_in2((d) + 2, kf_w_.y);                             \
    kf_unpack_in2((d) + 4, kf_w_.z);                             \
    kf_unpack_in2((d) + 6, kf_w_.w);                             \
  } while (0)
#else
#define KF_LOAD_IN_VEC_ALIGNED_2(d, p, i)                        \
  do {                                                           \
    const float2 kf_v_ = *(const float2*)((p) + (i));            \
    (d)[0] = kf_v_.x;                                            \
    (d)[1] = kf_v_.y;                                            \
  } while (0)
#define KF_LOAD_IN_VEC_ALIGNED_4(d, p, i)                        \
  do {                                                           \
    const float4 kf_v_ = *(const float4*)((p) + (i));            \
    (d)[0] = kf_v_.x;                                            \
    (d)[1] = kf_v_.y;                                            \
    (d)[2] = kf_v_.z;                                            \
    (d)[3] = kf_v_.w;                                            \
  } while (0)
#define KF_LOAD_IN_VEC_ALIGNED_8(d, p, i)                        \
  do {                                                           \
    KF_LOAD_IN_VEC_ALIGNED_4((d), (p), (i));                     \
    KF_LOAD_IN_VEC_ALIGNED_4((d) + 4, (p), (i) + 4);             \
  } while (0)
#endif
#define KF_LOAD_IN_VEC_ALIGNED_1(d, p, i) ((d)[0] = KF_LOAD_IN(p, i))
#define KF_LOAD_IN_VEC_ALIGNED(dst, ptr, idx, n) KF_CAT(KF_LOAD_IN_VEC_ALIGNED_, n)(dst, ptr, idx)

/* KF_STORE_F32_VEC(ptr, idx, src, n): ptr[idx .. idx+n) = src[0..n) for a float
 * ptr, in 16-byte stores at most; ptr + idx must be aligned to n floats. */
#define KF_STORE_F32_VEC_1(p, i, s) ((p)[(i)] = (s)[0])
#define KF_STORE_F32_VEC_2(p, i, s)                              \
  do {                                                           \
    float2 kf_v_;                                                \
    kf_v_.x = (s)[0];                                            \
    kf_v_.y = (s)[1];                                            \
    *(float2*)((p) + (i)) = kf_v_;                               \
  } while (0)
#define KF_STORE_F32_VEC_4(p, i, s)                              \
  do {                                                           \
    float4 kf_v_;                                                \
    kf_v_.x = (s)[0];                                            \
    kf_v_.y = (s)[1];                                            \
    kf_v_.z = (s)[2];                                            \
    kf_v_.w = (s)[3];                                            \
    *(float4*)((p) + (i)) = kf_v_;                               \
  } while (0)
#define KF_STORE_F32_VEC_8(p, i, s)                              \
  do {                                                           \
    KF_STORE_F32_VEC_4((p), (i), (s));                           \
    KF_STORE_F32_VEC_4((p), (i) + 4, (s) + 4);                   \
  } while (0)
#define KF_STORE_F32_VEC(ptr, idx, src, n) KF_CAT(KF_STORE_F32_VEC_, n)(ptr, idx, src)

/* ---- warp shuffles: KF_SHUFFLE_XOR(v, m) is lane (lane ^ m)'s float v, for
 * m < KF_SHUFFLE_LANES (lanes a shuffle reaches on every device of the
 * backend); every lane of the warp must take part. ---- */
#define KF_HAS_SHUFFLE 1
#define KF_SHUFFLE_LANES 32 /* KF_SHUFFLE_XOR comes from cuda.h or hip.h */

/* ---- math: KF_RSQRT for templates, KF_ERF and KF_EXP for the shared epilogue ---- */
#define KF_RSQRT(x) rsqrtf(x) /* 1 / sqrt(x) */
#define KF_ERF(x) erff(x)
#define KF_EXP(x) expf(x)

#endif /* KF_PRELUDE_GPU_H */
