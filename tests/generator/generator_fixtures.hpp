// Manifests shared by the generator tests, as nlohmann::json so each test can
// break exactly one field.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "generator/manifest.hpp"

namespace kforge::test {

/// A valid gemm manifest. Default configuration BK8_BM32_BN32_TM2_TN2: block
/// 16 x 16 = 256 threads (the baseline limit), 2048 bytes of local memory.
inline nlohmann::json gemm_manifest_json() {
  return nlohmann::json::parse(R"json({
    "schema_version": 1,
    "name": "gemm_test",
    "operator": "gemm",
    "description": "a tiled SIMT gemm for tests",
    "source": "gemm_test.c",
    "kernel": "gemm_test",
    "targets": ["opencl", "cuda", "hip"],
    "arch_guard": [],
    "dtypes": ["f32", "f16"],
    "layouts": ["NN", "NT", "TN", "TT"],
    "parameters": [
      {"name": "BM", "values": [16, 32, 64], "default": 32, "doc": "rows of C per block"},
      {"name": "BN", "values": [16, 32, 64], "default": 32, "doc": "columns of C per block"},
      {"name": "BK", "values": [8, 16], "default": 8},
      {"name": "TM", "values": [1, 2, 3, 4], "default": 2},
      {"name": "TN", "values": [1, 2, 4], "default": 2}
    ],
    "constraints": ["BM % TM == 0", "BN % TN == 0"],
    "envelope": ["M >= 1"],
    "launch": {"block": ["BN / TN", "BM / TM", "1"],
               "grid": ["ceil_div(N, BN)", "ceil_div(M, BM)", "batch"]},
    "local_memory_bytes": "BK * (BM + BN) * 4"
  })json");
}

inline Result<TemplateManifest> parse_manifest(const nlohmann::json& j) {
  return TemplateManifest::parse(j.dump(2), "t/manifest.json");
}

}  // namespace kforge::test
