#include "runtime/device/host/host_cache_eviction.hpp"

#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kforge {

#if defined(__x86_64__)

namespace {

// CLFLUSHOPT flushes lines in parallel; CLFLUSH (every x86-64 CPU) one at a time.
bool has_clflushopt() {
  static const bool yes = __builtin_cpu_supports("clflushopt");
  return yes;
}

__attribute__((target("clflushopt"))) void evict_clflushopt(const char* p, const char* end) {
  for (; p < end; p += kEvictionStride) _mm_clflushopt(const_cast<char*>(p));  // the line is only evicted
}

void evict_clflush(const char* p, const char* end) {
  for (; p < end; p += kEvictionStride) _mm_clflush(p);
}

}  // namespace

bool host_cache_eviction_available() { return true; }

void evict_host_range(const void* data, std::size_t bytes) {
  if (bytes == 0) return;
  // From the line holding the first byte, so a range that starts mid-line
  // loses its first line too.
  const auto first = reinterpret_cast<std::uintptr_t>(data) & ~std::uintptr_t{kEvictionStride - 1};
  const char* p = reinterpret_cast<const char*>(first);
  const char* end = static_cast<const char*>(data) + bytes;
  if (has_clflushopt()) {
    evict_clflushopt(p, end);
  } else {
    evict_clflush(p, end);
  }
  _mm_mfence();  // CLFLUSHOPT is ordered by fences only
}

#elif defined(__aarch64__)

bool host_cache_eviction_available() { return true; }

void evict_host_range(const void* data, std::size_t bytes) {
  if (bytes == 0) return;
  const auto first = reinterpret_cast<std::uintptr_t>(data) & ~std::uintptr_t{kEvictionStride - 1};
  const auto end = reinterpret_cast<std::uintptr_t>(data) + bytes;
  for (std::uintptr_t p = first; p < end; p += kEvictionStride) {
    asm volatile("dc civac, %0" : : "r"(p) : "memory");  // clean and invalidate to the point of coherence
  }
  asm volatile("dsb ish" : : : "memory");
}

#else

bool host_cache_eviction_available() { return false; }
void evict_host_range(const void*, std::size_t) {}

#endif

}  // namespace kforge
