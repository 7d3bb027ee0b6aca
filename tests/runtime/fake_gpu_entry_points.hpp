// The entry points the CUDA driver and the HIP runtime have in common, over
// the fake GPU (fake_gpu_driver.hpp): one template each, instantiated with
// either API's handle types when its table is filled.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <type_traits>
#include <utility>

#include "tests/runtime/fake_gpu_driver.hpp"

namespace kforge::test::fake {

inline FakeGpu& gpu() {
  return FakeGpu::get();
}

inline int device_count(int* n) {
  *n = 1;
  return 0;
}
template <const char* kName, class D>
int device_name(char* name, int size, D) {
  std::strncpy(name, kName, static_cast<std::size_t>(size));
  return 0;
}
template <class D>
int total_memory(std::size_t* bytes, D) {
  *bytes = std::size_t{1} << 30;
  return 0;
}
/// An attribute's value from `values` (attribute, value pairs), 0 where absent.
inline int attribute_value(int attribute, std::initializer_list<std::pair<int, int>> values) {
  for (const auto& [a, v] : values)
    if (a == attribute) return v;
  return 0;
}

template <class P>
std::uintptr_t address(P p) {
  if constexpr (std::is_pointer_v<P>) {
    return reinterpret_cast<std::uintptr_t>(p);
  } else {
    return static_cast<std::uintptr_t>(p);
  }
}

template <class P>
P handle(std::uintptr_t a) {
  if constexpr (std::is_pointer_v<P>) {
    return reinterpret_cast<P>(a);
  } else {
    return static_cast<P>(a);
  }
}

template <class P>
int allocate(P* p, std::size_t bytes) {
  std::uintptr_t a = 0;
  const int r = gpu().allocate(&a, bytes);
  *p = handle<P>(a);
  return r;
}
template <class P>
int release(P p) {
  return gpu().release(address(p));
}
template <class P, class Source>
int copy_in(P dst, Source src, std::size_t n) {
  return gpu().copy_in(address(dst), src, n);
}
template <class P>
int copy_out(void* dst, P src, std::size_t n) {
  return gpu().copy_out(dst, address(src), n);
}
template <class P, class Value>
int memset32(P dst, Value v, std::size_t n) {
  return gpu().memset32(address(dst), static_cast<unsigned>(v), n);
}
inline int synchronize() {
  if (int r = gpu().take_failure(FakeOp::kSynchronize)) return r;
  return gpu().fault;
}

template <class M>
int load_module(M* m, const void* image) {
  return gpu().load_module(reinterpret_cast<FakeModule**>(m), image);
}
template <class M>
int unload_module(M m) {
  gpu().unload_module(reinterpret_cast<FakeModule*>(m));
  return 0;
}
/// A module holds one kernel, which its handle stands for.
template <class F, class M>
int get_function(F* f, M m, const char* name) {
  if (reinterpret_cast<FakeModule*>(m)->kernel != name) return 500;  // not found
  *f = reinterpret_cast<F>(m);
  return 0;
}
template <class P, class M>
int get_global(P* p, std::size_t* bytes, M m, const char* name) {
  std::uintptr_t a = 0;
  const int r = gpu().global(*reinterpret_cast<FakeModule*>(m), name, &a, bytes);
  *p = handle<P>(a);
  return r;
}
template <class F, class S>
int launch(F f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shared,
           S stream, void** params, void**) {
  const unsigned grid[] = {gx, gy, gz}, block[] = {bx, by, bz};
  return gpu().launch(*reinterpret_cast<FakeModule*>(f), grid, block, shared, stream, params);
}

template <class S, class... Flags>
int create_stream(S* s, Flags...) {
  *s = reinterpret_cast<S>(std::uintptr_t{0x5757});
  return 0;
}
template <class S>
int destroy_stream(S) {
  return 0;
}
template <class E, class... Flags>
int create_event(E* e, Flags...) {
  if (int r = gpu().take_failure(FakeOp::kEventCreate)) return r;
  *e = reinterpret_cast<E>(new int(0));
  return 0;
}
template <class E>
int destroy_event(E e) {
  delete reinterpret_cast<int*>(e);
  return 0;
}
template <class E, class S>
int record_event(E, S) {
  return gpu().take_failure(FakeOp::kEventRecord);
}
template <class E>
int synchronize_event(E) {
  return gpu().event_synchronize();
}
template <class E>
int elapsed_ms(float* ms, E, E) {
  *ms = gpu().elapsed_ms;
  return 0;
}

}  // namespace kforge::test::fake
