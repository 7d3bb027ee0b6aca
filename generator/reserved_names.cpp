// The names kforge reserves in manifests and operator declarations.
#include "generator/reserved_names.hpp"

#include <algorithm>
#include <cctype>

#include "generator/device_limits.hpp"

namespace kforge {

namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool taken(std::string_view macro) {
  const auto& all = prelude_macros();
  return std::find(all.begin(), all.end(), macro) != all.end();
}

}  // namespace

std::string reserved_name_reason(std::string_view name) {
  for (const char* limit : kDeviceLimitNames) {
    if (name == limit) return "a device limit in expressions (docs/templates.md)";
  }
  if (name == "dtype_bytes") return "the problem dtype's size in expressions";
  if (name == "min" || name == "max" || name == "ceil_div") return "a function of the expression language";
  if (name.size() >= 3 && upper(name.substr(0, 3)) == "KF_") return "the prelude's KF_/kf_ names";
  return "";
}

const std::vector<std::string_view>& prelude_macros() {
  // The generator's defines (instance.cpp, device_reference.cpp), then
  // templates/prelude/*.h; a test checks this list against the preludes.
  static const std::vector<std::string_view> macros = {
      "KF_KERNEL_NAME", "KF_DTYPE_F32", "KF_DTYPE_F16", "KF_DTYPE_BF16", "KF_DTYPE_BYTES", "KF_TRANS_A",
      "KF_TRANS_B", "KF_BIAS", "KF_ACTIVATION", "KF_REF_F64", "KF_ACTIVATION_GELU", "KF_ACTIVATION_NONE",
      "KF_ACTIVATION_RELU", "KF_ACTIVATION_SILU", "KF_ATOMIC_INC", "KF_BACKEND_CUDA", "KF_BACKEND_HIP",
      "KF_BACKEND_OPENCL", "KF_BARRIER", "KF_BF16N_TO_F32N", "KF_BF16_TO_F32", "KF_BLOCK_DIM_X",
      "KF_BLOCK_DIM_Y", "KF_BLOCK_DIM_Z", "KF_BLOCK_X", "KF_BLOCK_Y", "KF_BLOCK_Z", "KF_CAT", "KF_CAT_",
      "KF_DYNAMIC_SHARED_BYTES", "KF_EPILOGUE_H", "KF_ERF", "KF_EXP", "KF_GLOBAL", "KF_GLOBAL_FENCE",
      "KF_GRID_DIM_X", "KF_GRID_DIM_Y", "KF_GRID_DIM_Z", "KF_HAS_SHUFFLE", "KF_INLINE", "KF_IN_BITS_TO_F32",
      "KF_KERNEL", "KF_LAUNCH_BOUNDS", "KF_LOAD_IN", "KF_LOAD_IN_VEC", "KF_LOAD_IN_VEC_1", "KF_LOAD_IN_VEC_2",
      "KF_LOAD_IN_VEC_4", "KF_LOAD_IN_VEC_8", "KF_LOAD_IN_VEC_ALIGNED", "KF_LOAD_IN_VEC_ALIGNED_1",
      "KF_LOAD_IN_VEC_ALIGNED_2", "KF_LOAD_IN_VEC_ALIGNED_4", "KF_LOAD_IN_VEC_ALIGNED_8", "KF_LOAD_IN_VEC_N_",
      "KF_LOAD_ROW_CHUNK", "KF_LOCAL", "KF_LOCAL_PTR", "KF_PRELUDE_GPU_H", "KF_PRELUDE_H", "KF_RESTRICT",
      "KF_ROWS_H", "KF_ROW_LANES", "KF_ROW_SLOTS", "KF_RSQRT", "KF_SHUFFLE_LANES", "KF_SHUFFLE_XOR",
      "KF_SPLAT_2", "KF_SPLAT_4", "KF_SPLAT_8", "KF_STORE_F32_VEC", "KF_STORE_F32_VEC_1",
      "KF_STORE_F32_VEC_2", "KF_STORE_F32_VEC_4", "KF_STORE_F32_VEC_8", "KF_THREAD_X", "KF_THREAD_Y",
      "KF_THREAD_Z", "KF_UNROLL"};
  return macros;
}

std::string attribute_macro_clash(std::string_view name, const std::vector<std::string>& values) {
  const std::string base = "KF_" + upper(name);
  if (taken(base)) return "its macro " + base + " is the prelude's";
  for (const auto& v : values) {
    const std::string macro = base + "_" + upper(v);
    if (taken(macro)) return "its value '" + v + "' makes macro " + macro + ", which is the prelude's";
  }
  return "";
}

}  // namespace kforge
