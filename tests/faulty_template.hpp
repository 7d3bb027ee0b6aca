// The faulty test template (tests/data/templates/gemm_faulty): one planted
// fault per FLAW value and the status each must end with, on PoCL and on a
// CUDA GPU alike (the isolation tests).
#pragma once

#include <map>
#include <string>

namespace kforge::test {

inline const std::string kFaulty = std::string(KFORGE_TEST_DATA_DIR) + "/templates/gemm_faulty";

/// FLAW value -> status: correct, out-of-bounds write (a crash on PoCL, a
/// sticky device error on a GPU), endless loop, compile error, wrong result,
/// NaN result, local memory over any device's limit.
inline const std::map<int, std::string> kFaultyStatus = {
    {0, "ok"}, {1, "crash"}, {2, "timeout"}, {3, "compile_error"}, {4, "wrong_result"}, {5, "wrong_result"},
    {6, "resource_limit"}};

/// The configurations of gemm_faulty (BX 8 and 16 for every FLAW).
inline std::string faulty_config(int bx, int flaw) {
  return "BX" + std::to_string(bx) + "_FLAW" + std::to_string(flaw);
}

}  // namespace kforge::test
