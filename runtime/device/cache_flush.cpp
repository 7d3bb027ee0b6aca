// The flush size rule shared by the OpenCL, CUDA and HIP backends.
#include "runtime/device/cache_flush.hpp"

#include <algorithm>
#include <string>

#include "generator/backend_traits.hpp"
#include "runtime/device/target.hpp"

namespace kforge {

namespace {

bool is_amd_gpu(const DeviceInfo& info) {
  if (info.device_type != DeviceType::kGpu) return false;  // an AMD CPU under PoCL reports its own L3
  return is_backend(info.backend, BackendId::kHip) || info.vendor.find("Advanced Micro Devices") != std::string::npos ||
         info.vendor == "AMD";
}

}  // namespace

std::string_view flush_method_name(CacheFlushMethod m) {
  return m == CacheFlushMethod::kEvict ? "evict" : "fill";
}

std::int64_t memory_side_cache_bytes(const DeviceInfo& info) {
  if (!is_amd_gpu(info)) return 0;
  if (auto r = arch_resources(std::string(name(BackendId::kHip)), info.arch)) return r->memory_side_cache_bytes;
  return std::int64_t{256} << 20;
}

std::size_t cache_flush_bytes(const DeviceInfo& info, std::size_t max_bytes) {
  constexpr std::size_t kMinBytes = std::size_t{32} << 20;
  const std::int64_t cache = std::max<std::int64_t>({info.cache_bytes, memory_side_cache_bytes(info), 0});
  std::size_t bytes = std::max(2 * static_cast<std::size_t>(cache), kMinBytes);
  if (max_bytes > 0) bytes = std::min(bytes, max_bytes);
  // Never a quarter of the device's memory or more: a small device keeps room
  // for the problem's buffers.
  if (info.global_mem_bytes > 0) bytes = std::min(bytes, static_cast<std::size_t>(info.global_mem_bytes) / 4);
  return bytes & ~std::size_t{15};
}

}  // namespace kforge
