/* kforge portable prelude for OpenCL C 1.2 (PoCL and GPU drivers).
 * Sibling preludes (cuda.h, hip.h) define the same names for CUDA/HIP C++,
 * so a portable template is written once. Reference: docs/prelude.md.
 * Before this file the generator defines the template's parameters,
 * KF_KERNEL_NAME, KF_DTYPE_F32 | KF_DTYPE_F16 | KF_DTYPE_BF16, KF_DTYPE_BYTES,
 * KF_TRANS_A / KF_TRANS_B, KF_BIAS, KF_ACTIVATION and the operator's
 * attributes (KF_<NAME>). OpenCL C only: no C++ here or in templates. */
#ifndef KF_PRELUDE_H
#define KF_PRELUDE_H

#define KF_BACKEND_OPENCL 1

/* ---- qualifiers ---- */
#define KF_KERNEL __kernel
#define KF_GLOBAL __global
#define KF_LOCAL __local     /* declares a local array at kernel scope */
#define KF_LOCAL_PTR __local /* qualifies a pointer parameter into local memory */
#define KF_RESTRICT restrict
#define KF_INLINE static inline
/* Threads per block the kernel is always launched with (a hint to the compiler;
 * a launch with another block size fails). Place it after the return type. */
#define KF_LAUNCH_BOUNDS(x, y, z) __attribute__((reqd_work_group_size(x, y, z)))
#define KF_UNROLL _Pragma("unroll")

/* ---- thread and block indices, as int ---- */
#define KF_THREAD_X ((int)get_local_id(0))
#define KF_THREAD_Y ((int)get_local_id(1))
#define KF_THREAD_Z ((int)get_local_id(2))
#define KF_BLOCK_X ((int)get_group_id(0))
#define KF_BLOCK_Y ((int)get_group_id(1))
#define KF_BLOCK_Z ((int)get_group_id(2))
#define KF_BLOCK_DIM_X ((int)get_local_size(0))
#define KF_BLOCK_DIM_Y ((int)get_local_size(1))
#define KF_BLOCK_DIM_Z ((int)get_local_size(2))
#define KF_GRID_DIM_X ((int)get_num_groups(0))
#define KF_GRID_DIM_Y ((int)get_num_groups(1))
#define KF_GRID_DIM_Z ((int)get_num_groups(2))

/* Work-group barrier that also orders local (and global) memory. */
#define KF_BARRIER() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)

/* ---- input dtype: storage type and loads through float ---- */
#define KF_CAT_(a, b) a##b
#define KF_CAT(a, b) KF_CAT_(a, b)

#if defined(KF_DTYPE_F16)
/* half is legal as a pointee without cl_khr_fp16; vload_half converts. */
typedef half kf_in_t;
#define KF_LOAD_IN(p, i) vload_half((i), (p))
#define KF_LOAD_IN_VEC_2(d, p, i) KF_SPLAT_2(d, vload_half2(0, (p) + (i)))
#define KF_LOAD_IN_VEC_4(d, p, i) KF_SPLAT_4(d, vload_half4(0, (p) + (i)))
#define KF_LOAD_IN_VEC_8(d, p, i) KF_SPLAT_8(d, vload_half8(0, (p) + (i)))
#elif defined(KF_DTYPE_BF16)
/* bf16 is stored as its 16 bits: the high half of an f32. */
typedef ushort kf_in_t;
#define KF_BF16_TO_F32(u) as_float((uint)(u) << 16)
#define KF_BF16N_TO_F32N(n, u) as_float##n(convert_uint##n(u) << 16)
#define KF_LOAD_IN(p, i) KF_BF16_TO_F32((p)[(i)])
#define KF_LOAD_IN_VEC_2(d, p, i) KF_SPLAT_2(d, KF_BF16N_TO_F32N(2, vload2(0, (p) + (i))))
#define KF_LOAD_IN_VEC_4(d, p, i) KF_SPLAT_4(d, KF_BF16N_TO_F32N(4, vload4(0, (p) + (i))))
#define KF_LOAD_IN_VEC_8(d, p, i) KF_SPLAT_8(d, KF_BF16N_TO_F32N(8, vload8(0, (p) + (i))))
#else
#ifndef KF_DTYPE_F32
#define KF_DTYPE_F32 1
#endif
typedef float kf_in_t;
#define KF_LOAD_IN(p, i) ((float)(p)[(i)])
#define KF_LOAD_IN_VEC_2(d, p, i) KF_SPLAT_2(d, vload2(0, (p) + (i)))
#define KF_LOAD_IN_VEC_4(d, p, i) KF_SPLAT_4(d, vload4(0, (p) + (i)))
#define KF_LOAD_IN_VEC_8(d, p, i) KF_SPLAT_8(d, vload8(0, (p) + (i)))
#endif

#define KF_LOAD_IN_VEC_1(d, p, i) ((d)[0] = KF_LOAD_IN(p, i))

/* Copies the lanes of a float vector into a float array. */
#define KF_SPLAT_2(d, v) \
  do { float2 kf_v_ = (v); (d)[0] = kf_v_.s0; (d)[1] = kf_v_.s1; } while (0)
#define KF_SPLAT_4(d, v)                                                        \
  do {                                                                          \
    float4 kf_v_ = (v);                                                         \
    (d)[0] = kf_v_.s0; (d)[1] = kf_v_.s1; (d)[2] = kf_v_.s2; (d)[3] = kf_v_.s3; \
  } while (0)
#define KF_SPLAT_8(d, v)                                                        \
  do {                                                                          \
    float8 kf_v_ = (v);                                                         \
    (d)[0] = kf_v_.s0; (d)[1] = kf_v_.s1; (d)[2] = kf_v_.s2; (d)[3] = kf_v_.s3; \
    (d)[4] = kf_v_.s4; (d)[5] = kf_v_.s5; (d)[6] = kf_v_.s6; (d)[7] = kf_v_.s7; \
  } while (0)

/* KF_LOAD_IN_VEC(dst, ptr, idx, n): dst[0..n) = (float)ptr[idx .. idx+n) for
 * n in 1, 2, 4, 8 (a literal or a macro expanding to one, e.g. VW). Legal at
 * any element-aligned address; the caller checks bounds. */
#define KF_LOAD_IN_VEC(dst, ptr, idx, n) KF_CAT(KF_LOAD_IN_VEC_, n)(dst, ptr, idx)

/* KF_LOAD_IN_VEC_ALIGNED(dst, ptr, idx, n): as KF_LOAD_IN_VEC, for ptr + idx
 * aligned to n elements (vloadN needs no more than element alignment). */
#define KF_LOAD_IN_VEC_ALIGNED(dst, ptr, idx, n) KF_LOAD_IN_VEC(dst, ptr, idx, n)

/* KF_STORE_F32_VEC(ptr, idx, src, n): ptr[idx .. idx+n) = src[0..n) for a float
 * ptr, as one vstoreN. */
#define KF_STORE_F32_VEC_1(p, i, s) ((p)[(i)] = (s)[0])
#define KF_STORE_F32_VEC_2(p, i, s) vstore2((float2)((s)[0], (s)[1]), 0, (p) + (i))
#define KF_STORE_F32_VEC_4(p, i, s) vstore4((float4)((s)[0], (s)[1], (s)[2], (s)[3]), 0, (p) + (i))
#define KF_STORE_F32_VEC_8(p, i, s) \
  vstore8((float8)((s)[0], (s)[1], (s)[2], (s)[3], (s)[4], (s)[5], (s)[6], (s)[7]), 0, (p) + (i))
#define KF_STORE_F32_VEC(ptr, idx, src, n) KF_CAT(KF_STORE_F32_VEC_, n)(ptr, idx, src)

/* ---- warp shuffles: none in OpenCL C 1.2 (sub-groups are an extension whose
 * size the kernel cannot rely on), so templates reduce through local memory. ---- */
#define KF_HAS_SHUFFLE 0

/* ---- cross-work-group combining (the last-block-done pattern) ---- */
/* Atomically increments the global int *p and returns its old value. */
#define KF_ATOMIC_INC(p) atomic_inc(p)
/* Orders this thread's global writes before its later global accesses
 * (write partial; fence; take the ticket; the last group fences, then reads). */
#define KF_GLOBAL_FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)

/* ---- math: KF_RSQRT for templates, KF_ERF and KF_EXP for the shared epilogue ---- */
#define KF_RSQRT(x) rsqrt(x) /* 1 / sqrt(x) */
#define KF_ERF(x) erf(x)
#define KF_EXP(x) exp(x)

#endif /* KF_PRELUDE_H */
