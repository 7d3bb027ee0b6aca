// A kernel's workspaces, one set per stream (kernel_workspaces.hpp).
#include "runtime/device/kernel_workspaces.hpp"

#include <algorithm>
#include <cstdio>

namespace kforge {

namespace {

/// Bytes to allocate: at least 1, whole 32-bit words (devices zero in words).
std::size_t allocation_bytes(const AbiWorkspace& spec) {
  const std::int64_t bytes = std::max<std::int64_t>(spec.bytes(), 1);
  return static_cast<std::size_t>((bytes + 3) / 4 * 4);
}

Result<std::vector<std::unique_ptr<Buffer>>> make_all(const std::vector<AbiWorkspace>& specs,
                                                      const WorkspaceMemory& memory) {
  std::vector<std::unique_ptr<Buffer>> made;  // freed on any failure: all or none
  for (const AbiWorkspace& spec : specs) {
    auto buffer = memory.allocate(allocation_bytes(spec));
    if (!buffer.ok()) {
      Error e = buffer.error();
      e.message = "workspace " + spec.name + ": " + e.message;
      return e;
    }
    if (spec.zeroed) {
      if (Status z = memory.zero(**buffer); !z.ok()) {
        Error e = z.error();
        e.message = "zeroing workspace " + spec.name + ": " + e.message;
        return e;
      }
    }
    made.push_back(std::move(*buffer));
  }
  return made;
}

std::string hex_byte(unsigned char b) {
  char text[8];
  std::snprintf(text, sizeof text, "0x%02x", b);
  return text;
}

}  // namespace

Result<std::vector<Buffer*>> KernelWorkspaces::for_stream(std::uintptr_t stream, const std::vector<AbiWorkspace>& specs,
                                                          const WorkspaceMemory& memory) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = by_stream_.find(stream);
  if (it == by_stream_.end()) {
    KF_TRY_ASSIGN(made, make_all(specs, memory));
    it = by_stream_.emplace(stream, std::move(made)).first;
  }
  std::vector<Buffer*> out;
  for (const auto& b : it->second) out.push_back(b.get());
  return out;
}

Status KernelWorkspaces::check_zeroed(std::uintptr_t stream, const std::vector<AbiWorkspace>& specs,
                                      const WorkspaceMemory& memory, const std::string& kernel) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = by_stream_.find(stream);
  if (it == by_stream_.end()) return ok_status();
  for (std::size_t i = 0; i < specs.size() && i < it->second.size(); ++i) {
    if (!specs[i].zeroed) continue;
    Buffer& buffer = *it->second[i];
    std::vector<unsigned char> bytes(buffer.size());
    KF_TRY(memory.read(buffer, bytes.data(), bytes.size()));
    std::size_t first = 0;
    while (first < bytes.size() && bytes[first] == 0) ++first;
    if (first == bytes.size()) continue;
    KF_TRY(memory.zero(buffer));
    return Error{ErrorCode::kLaunch,
                 kernel + " left workspace " + specs[i].name + " non-zero: byte " + std::to_string(first) + " of " +
                     std::to_string(specs[i].bytes()) + " is " + hex_byte(bytes[first]),
                 {}};
  }
  return ok_status();
}

void KernelWorkspaces::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  by_stream_.clear();
}

}  // namespace kforge
