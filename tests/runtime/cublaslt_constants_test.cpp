// The cuBLASLt types and values runtime/libraries/cublaslt_api.hpp declares by hand
// (so kforge builds without the toolkit) against cublasLt.h, where the build
// finds it. Its own executable: cublasLt.h brings the CUDA runtime's vector
// types, which HIP's headers (driver_constants_test.cpp) declare too.
#include <catch2/catch.hpp>

#include <cstddef>

#include <cublasLt.h>

#include "runtime/libraries/cublaslt_api.hpp"

TEST_CASE("cublaslt_api.hpp's types and values are cublasLt.h's", "[cuda][cublaslt]") {
  namespace lt = kforge::cublaslt;
  CHECK(sizeof(lt::Algo) == sizeof(cublasLtMatmulAlgo_t));
  CHECK(sizeof(lt::HeuristicResult) == sizeof(cublasLtMatmulHeuristicResult_t));
  CHECK(offsetof(lt::HeuristicResult, workspace_size) ==
        offsetof(cublasLtMatmulHeuristicResult_t, workspaceSize));
  CHECK(offsetof(lt::HeuristicResult, state) == offsetof(cublasLtMatmulHeuristicResult_t, state));
  CHECK(offsetof(lt::HeuristicResult, waves_count) == offsetof(cublasLtMatmulHeuristicResult_t, wavesCount));
  CHECK(lt::kSuccess == static_cast<int>(CUBLAS_STATUS_SUCCESS));
  CHECK(lt::kR32F == static_cast<int>(CUDA_R_32F));
  CHECK(lt::kR16F == static_cast<int>(CUDA_R_16F));
  CHECK(lt::kR16BF == static_cast<int>(CUDA_R_16BF));
  CHECK(lt::kCompute32F == static_cast<int>(CUBLAS_COMPUTE_32F));
  CHECK(lt::kOpN == static_cast<int>(CUBLAS_OP_N));
  CHECK(lt::kOpT == static_cast<int>(CUBLAS_OP_T));
  CHECK(lt::kDescTransA == static_cast<int>(CUBLASLT_MATMUL_DESC_TRANSA));
  CHECK(lt::kDescTransB == static_cast<int>(CUBLASLT_MATMUL_DESC_TRANSB));
  CHECK(lt::kDescEpilogue == static_cast<int>(CUBLASLT_MATMUL_DESC_EPILOGUE));
  CHECK(lt::kDescBiasPointer == static_cast<int>(CUBLASLT_MATMUL_DESC_BIAS_POINTER));
  CHECK(lt::kLayoutBatchCount == static_cast<int>(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT));
  CHECK(lt::kLayoutStridedBatchOffset == static_cast<int>(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET));
  CHECK(lt::kPrefMaxWorkspaceBytes == static_cast<int>(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES));
  CHECK(lt::kEpilogueDefault == static_cast<unsigned>(CUBLASLT_EPILOGUE_DEFAULT));
  CHECK(lt::kEpilogueRelu == static_cast<unsigned>(CUBLASLT_EPILOGUE_RELU));
  CHECK(lt::kEpilogueBias == static_cast<unsigned>(CUBLASLT_EPILOGUE_BIAS));
  CHECK(lt::kEpilogueReluBias == static_cast<unsigned>(CUBLASLT_EPILOGUE_RELU_BIAS));
  CHECK(lt::kConfigId == static_cast<int>(CUBLASLT_ALGO_CONFIG_ID));
  CHECK(lt::kConfigTileId == static_cast<int>(CUBLASLT_ALGO_CONFIG_TILE_ID));
  CHECK(lt::kConfigSplitkNum == static_cast<int>(CUBLASLT_ALGO_CONFIG_SPLITK_NUM));
  CHECK(lt::kConfigReductionScheme == static_cast<int>(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME));
  CHECK(lt::kConfigCtaSwizzling == static_cast<int>(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING));
  CHECK(lt::kConfigCustomOption == static_cast<int>(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION));
  CHECK(lt::kConfigStagesId == static_cast<int>(CUBLASLT_ALGO_CONFIG_STAGES_ID));
  CHECK(lt::kConfigInnerShapeId == static_cast<int>(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID));
  CHECK(lt::kConfigClusterShapeId == static_cast<int>(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID));
}
