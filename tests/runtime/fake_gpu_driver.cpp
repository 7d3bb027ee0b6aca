// The fake GPU's memory, modules and launches (fake_gpu_driver.hpp).
#include "tests/runtime/fake_gpu_driver.hpp"

#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <sstream>

#include "runtime/binaries/code_object_reader.hpp"
#include "runtime/binaries/cubin_attributes.hpp"
#include "runtime/binaries/elf_image.hpp"

namespace kforge::test {

namespace {

constexpr int kInvalidValue = 1;
constexpr int kOutOfMemory = 2;
constexpr int kIllegalAddress = 700;
constexpr int kNotFound = 500;

/// The allocation holding [address, address + bytes), or end().
auto find_range(std::map<std::uintptr_t, std::size_t>& allocations, std::uintptr_t address,
                std::size_t bytes) {
  auto it = allocations.upper_bound(address);
  if (it == allocations.begin()) return allocations.end();
  --it;
  return address + bytes <= it->first + it->second ? it : allocations.end();
}

std::size_t param_bytes(char kind) {
  if (kind == '1' || kind == '2') return static_cast<std::size_t>(kind - '0');
  return kind == 'p' ? sizeof(std::uintptr_t) : 4;
}

/// The bytes of the ELF file at `image`, from its header (section headers come last).
std::span<const std::uint8_t> elf_bytes(const void* image) {
  const auto* b = static_cast<const std::uint8_t*>(image);
  std::uint64_t shoff = 0;
  std::uint16_t shentsize = 0, shnum = 0;
  std::memcpy(&shoff, b + 0x28, sizeof shoff);
  std::memcpy(&shentsize, b + 0x3a, sizeof shentsize);
  std::memcpy(&shnum, b + 0x3c, sizeof shnum);
  return {b, static_cast<std::size_t>(shoff + std::uint64_t{shentsize} * shnum)};
}

/// A real binary's first kernel and its parameters as the fake's letters.
bool read_binary_module(const void* image, FakeModule& m) {
  const auto bytes = elf_bytes(image);
  std::vector<int> sizes;
  if (bytes[0x12] == 190) {  // e_machine EM_CUDA
    auto elf = read_elf_image(bytes);
    if (!elf.ok()) return false;
    auto info = read_cubin_info(*elf);
    if (!info.ok() || info->kernels.empty()) return false;
    m.kernel = info->kernels.front().name;
    for (const auto& p : info->kernels.front().parameters) sizes.push_back(p.bytes);
  } else {
    auto co = read_amd_code_object(bytes);
    if (!co.ok() || co->kernels.empty()) return false;
    m.kernel = co->kernels.front().name;
    for (const auto& a : co->kernels.front().arguments)
      if (!a.hidden()) sizes.push_back(static_cast<int>(a.bytes));
  }
  for (int n : sizes) m.args += n == 8 ? 'p' : n == 4 ? 'i' : static_cast<char>('0' + n);
  return true;
}

}  // namespace

FakeGpu& FakeGpu::get() {
  static FakeGpu gpu;
  return gpu;
}

void FakeGpu::reset() {
  for (const auto& [address, bytes] : allocations) std::free(reinterpret_cast<void*>(address));
  *this = FakeGpu{};
}

const FakeError* fake_error(int code) {
  static const FakeError kErrors[] = {
      {kInvalidValue, "CUDA_ERROR_INVALID_VALUE", "hipErrorInvalidValue", "invalid argument"},
      {kOutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY", "hipErrorOutOfMemory", "out of memory"},
      {kIllegalAddress, "CUDA_ERROR_ILLEGAL_ADDRESS", "hipErrorIllegalAddress",
       "an illegal memory access was encountered"},
  };
  for (const auto& e : kErrors)
    if (e.code == code) return &e;
  return nullptr;
}

int FakeGpu::take_failure(FakeOp op) {
  ++calls[op];
  auto it = failures.find(op);
  if (it == failures.end()) return 0;
  const int code = it->second;
  failures.erase(it);
  return code;
}

int FakeGpu::allocate(std::uintptr_t* address, std::size_t bytes) {
  if (int e = take_failure(FakeOp::kAllocate)) return e;
  void* p = std::calloc(bytes, 1);
  if (!p) return kOutOfMemory;
  *address = reinterpret_cast<std::uintptr_t>(p);
  allocations[*address] = bytes;
  return 0;
}

int FakeGpu::release(std::uintptr_t address) {
  auto it = allocations.find(address);
  if (it == allocations.end()) return kInvalidValue;
  std::free(reinterpret_cast<void*>(address));
  allocations.erase(it);
  return 0;
}

int FakeGpu::copy_in(std::uintptr_t dst, const void* src, std::size_t bytes) {
  if (int e = take_failure(FakeOp::kCopyIn)) return e;
  if (find_range(allocations, dst, bytes) == allocations.end()) return kInvalidValue;
  std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
  return 0;
}

int FakeGpu::copy_out(void* dst, std::uintptr_t src, std::size_t bytes) {
  if (int e = take_failure(FakeOp::kCopyOut)) return e;
  if (find_range(allocations, src, bytes) == allocations.end()) return kInvalidValue;
  std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  return 0;
}

int FakeGpu::memset32(std::uintptr_t dst, unsigned value, std::size_t count) {
  if (int e = take_failure(FakeOp::kMemset)) return e;
  if (find_range(allocations, dst, count * 4) == allocations.end()) return kInvalidValue;
  auto* words = reinterpret_cast<std::uint32_t*>(dst);
  for (std::size_t i = 0; i < count; ++i) words[i] = value;
  return 0;
}

int FakeGpu::load_module(FakeModule** module, const void* image) {
  if (int e = take_failure(FakeOp::kLoadModule)) return e;
  auto m = std::make_unique<FakeModule>();
  if (std::memcmp(image, "\x7f" "ELF", 4) == 0) {
    if (!read_binary_module(image, *m)) return kInvalidValue;
    *module = m.release();
    return 0;
  }
  std::istringstream words(static_cast<const char*>(image));
  std::string word;
  while (words >> word) {
    const auto eq = word.find('=');
    const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    if (key == "kernel") m->kernel = value;
    if (key == "args") m->args = value;
    if (key == "dynamic_shared") {
      if (int e = allocate(&m->dynamic_shared_global, sizeof(int))) return e;
      *reinterpret_cast<int*>(m->dynamic_shared_global) = std::stoi(value);
    }
  }
  *module = m.release();
  return 0;
}

void FakeGpu::unload_module(FakeModule* module) {
  ++calls[FakeOp::kUnloadModule];
  if (module->dynamic_shared_global) release(module->dynamic_shared_global);
  delete module;
}

int FakeGpu::event_synchronize() {
  if (int e = take_failure(FakeOp::kEventSynchronize)) return e;
  return fault;
}

int FakeGpu::global(const FakeModule& module, const char* name, std::uintptr_t* address, std::size_t* bytes) {
  if (std::string(name) != "kf_dynamic_shared_bytes" || !module.dynamic_shared_global) return kNotFound;
  *address = module.dynamic_shared_global;
  *bytes = sizeof(int);
  return 0;
}

int FakeGpu::launch(const FakeModule& module, const unsigned* grid, const unsigned* block, unsigned shared,
                    void* stream, void** params, std::array<unsigned, 3> cluster) {
  if (int e = take_failure(FakeOp::kLaunch)) return e;
  FakeLaunch l{module.kernel, {grid[0], grid[1], grid[2]}, {block[0], block[1], block[2]}, shared, stream, {},
               cluster};
  for (std::size_t i = 0; i < module.args.size(); ++i) {
    const auto* bytes = static_cast<const std::uint8_t*>(params[i]);
    l.params.emplace_back(bytes, bytes + param_bytes(module.args[i]));
  }
  launches.push_back(l);
  if (module.kernel != "fill" || module.args != "pif") return 0;
  // fill(float* out, int n, float value): out[0..n) = value.
  std::uintptr_t out = 0;
  std::int32_t n = 0;
  float value = 0;
  std::memcpy(&out, params[0], sizeof out);
  std::memcpy(&n, params[1], sizeof n);
  std::memcpy(&value, params[2], sizeof value);
  if (find_range(allocations, out, static_cast<std::size_t>(n) * sizeof(float)) == allocations.end()) {
    fault = kIllegalAddress;  // as a GPU reports it: when the work is waited for
    return 0;
  }
  for (std::int32_t i = 0; i < n; ++i) reinterpret_cast<float*>(out)[i] = value;
  return 0;
}

}  // namespace kforge::test
