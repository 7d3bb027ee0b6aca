// hipRTC's implicit declarations, for clang's offline HIP compile: only what
// kforge's preludes and templates use, each as HIP 5.2's headers define it.
#include "runtime/device/hip/hip_offline_header.hpp"

namespace kforge {

std::string_view hip_offline_header() {
  return R"KF(/* kforge: stands in for hipRTC's implicit header (runtime/device/hip/hip_offline_header.cpp). */
#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(n) __attribute__((amdgpu_flat_work_group_size(1, n)))

typedef __SIZE_TYPE__ size_t;
/* HIP's vector types: .x .y .z .w, aligned to their size. */
typedef float float2 __attribute__((ext_vector_type(2)));
typedef float float4 __attribute__((ext_vector_type(4)));
typedef unsigned int uint2 __attribute__((ext_vector_type(2)));
typedef unsigned int uint4 __attribute__((ext_vector_type(4)));
#define warpSize 64

extern "C" __device__ __SIZE_TYPE__ __ockl_get_local_size(unsigned);
extern "C" __device__ __SIZE_TYPE__ __ockl_get_num_groups(unsigned);

struct kf_hip_dim3 { unsigned x, y, z; };
#define threadIdx                                                                       \
  (kf_hip_dim3{__builtin_amdgcn_workitem_id_x(), __builtin_amdgcn_workitem_id_y(), \
               __builtin_amdgcn_workitem_id_z()})
#define blockIdx                                                                          \
  (kf_hip_dim3{__builtin_amdgcn_workgroup_id_x(), __builtin_amdgcn_workgroup_id_y(), \
               __builtin_amdgcn_workgroup_id_z()})
#define blockDim                                                                          \
  (kf_hip_dim3{(unsigned)__ockl_get_local_size(0), (unsigned)__ockl_get_local_size(1), \
               (unsigned)__ockl_get_local_size(2)})
#define gridDim                                                                           \
  (kf_hip_dim3{(unsigned)__ockl_get_num_groups(0), (unsigned)__ockl_get_num_groups(1), \
               (unsigned)__ockl_get_num_groups(2)})

__device__ inline void __syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
__device__ inline void __threadfence() { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent"); }
__device__ inline int atomicAdd(int* p, int v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
__device__ inline unsigned atomicAdd(unsigned* p, unsigned v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
__device__ inline float atomicAdd(float* p, float v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}

/* The lanes of a wavefront exchange through ds_bpermute, as HIP's __shfl_xor. */
__device__ inline int __lane_id() { return __builtin_amdgcn_mbcnt_hi(-1, __builtin_amdgcn_mbcnt_lo(-1, 0)); }
__device__ inline int __shfl_xor(int v, int mask, int width = warpSize) {
  const int self = __lane_id();
  int index = self ^ mask;
  index = index >= ((self + width) & ~(width - 1)) ? self : index;
  return __builtin_amdgcn_ds_bpermute(index << 2, v);
}
__device__ inline float __shfl_xor(float v, int mask, int width = warpSize) {
  return __builtin_bit_cast(float, __shfl_xor(__builtin_bit_cast(int, v), mask, width));
}

/* The C functions (expf) and C++'s float and double overloads (exp), as HIP's math headers define them. */
#define KF_HIP_OCML_1(c, cxx, f32)                                \
  extern "C" __device__ float __ocml_##f32##_f32(float);          \
  extern "C" __device__ double __ocml_##f32##_f64(double);        \
  __device__ inline float c(float x) { return __ocml_##f32##_f32(x); } \
  __device__ inline float cxx(float x) { return __ocml_##f32##_f32(x); } \
  __device__ inline double cxx(double x) { return __ocml_##f32##_f64(x); }
#define KF_HIP_OCML_2(c, cxx, f32)                                       \
  extern "C" __device__ float __ocml_##f32##_f32(float, float);          \
  extern "C" __device__ double __ocml_##f32##_f64(double, double);       \
  __device__ inline float c(float x, float y) { return __ocml_##f32##_f32(x, y); } \
  __device__ inline float cxx(float x, float y) { return __ocml_##f32##_f32(x, y); } \
  __device__ inline double cxx(double x, double y) { return __ocml_##f32##_f64(x, y); }
KF_HIP_OCML_1(expf, exp, exp)
KF_HIP_OCML_1(exp2f, exp2, exp2)
KF_HIP_OCML_1(logf, log, log)
KF_HIP_OCML_1(log2f, log2, log2)
KF_HIP_OCML_1(sinf, sin, sin)
KF_HIP_OCML_1(cosf, cos, cos)
KF_HIP_OCML_1(tanhf, tanh, tanh)
KF_HIP_OCML_1(erff, erf, erf)
KF_HIP_OCML_1(sqrtf, sqrt, sqrt)
KF_HIP_OCML_1(rsqrtf, rsqrt, rsqrt)
KF_HIP_OCML_1(fabsf, fabs, fabs)
KF_HIP_OCML_1(floorf, floor, floor)
KF_HIP_OCML_1(ceilf, ceil, ceil)
KF_HIP_OCML_2(fmaxf, fmax, fmax)
KF_HIP_OCML_2(fminf, fmin, fmin)
KF_HIP_OCML_2(powf, pow, pow)
extern "C" __device__ float __ocml_fma_f32(float, float, float);
__device__ inline float fmaf(float x, float y, float z) { return __ocml_fma_f32(x, y, z); }

__device__ inline int min(int a, int b) { return a < b ? a : b; }
__device__ inline int max(int a, int b) { return a > b ? a : b; }
__device__ inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
__device__ inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
__device__ inline float min(float a, float b) { return fminf(a, b); }
__device__ inline float max(float a, float b) { return fmaxf(a, b); }
)KF";
}

}  // namespace kforge
