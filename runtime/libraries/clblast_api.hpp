// CLBlast (OpenCL BLAS) loaded with dlopen: the GEMM entry points kforge's
// library candidates call, and the library's identity (version and file).
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace kforge::clblast {

/// CLBlast's C enumerations (clblast_c.h), as its ABI defines them.
enum Layout : int { kRowMajor = 101 };
enum Transpose : int { kNo = 111, kYes = 112 };
constexpr int kSuccess = 0;

struct Api {
  using Sgemm = int(int layout, int a_trans, int b_trans, std::size_t m, std::size_t n, std::size_t k,
                    float alpha, cl_mem a, std::size_t a_off, std::size_t a_ld, cl_mem b, std::size_t b_off,
                    std::size_t b_ld, float beta, cl_mem c, std::size_t c_off, std::size_t c_ld,
                    cl_command_queue* queue, cl_event* event);
  using SgemmStridedBatched = int(int layout, int a_trans, int b_trans, std::size_t m, std::size_t n,
                                  std::size_t k, float alpha, cl_mem a, std::size_t a_off, std::size_t a_ld,
                                  std::size_t a_stride, cl_mem b, std::size_t b_off, std::size_t b_ld,
                                  std::size_t b_stride, float beta, cl_mem c, std::size_t c_off,
                                  std::size_t c_ld, std::size_t c_stride, std::size_t batch,
                                  cl_command_queue* queue, cl_event* event);
  Sgemm* sgemm = nullptr;
  SgemmStridedBatched* sgemm_strided_batched = nullptr;
  /// "clblast 1.5.3 (/usr/lib/x86_64-linux-gnu/libclblast.so.1.5.3, 4529232 bytes)".
  std::string identity;
};

/// The library file names tried: $KFORGE_CLBLAST_LIBRARY when set (tests
/// point it at a file that does not exist), else libclblast.so.1 and libclblast.so.
std::vector<std::string> library_files();

/// Loads CLBlast once per process; the error names the library or symbol missing.
const Result<const Api*>& load();

}  // namespace kforge::clblast
