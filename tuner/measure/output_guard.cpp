// Guard zones past every output (output_guard.hpp).
#include "tuner/measure/output_guard.hpp"

#include <algorithm>

namespace kforge {

namespace {

/// Not a float a kernel computes by chance (0xA5A5A5A5 is -2.9e-16 with a
/// mantissa no rounding yields), nor zero or NaN, which kernels do write.
constexpr unsigned char kGuardByte = 0xA5;

}  // namespace

Status write_guarded(Device& device, Buffer& buf, const void* data, std::size_t bytes) {
  std::vector<unsigned char> image(bytes + kOutputGuardBytes, kGuardByte);
  const auto* from = static_cast<const unsigned char*>(data);
  std::copy(from, from + bytes, image.begin());
  return device.write(buf, image.data(), image.size());
}

Result<std::string> check_guard(Device& device, Buffer& buf, std::size_t bytes,
                                std::vector<unsigned char>& scratch) {
  // The device API reads from the start: the output comes along (validation
  // runs are few, and their readback is small beside the launch).
  scratch.resize(bytes + kOutputGuardBytes);
  KF_TRY(device.read(buf, scratch.data(), scratch.size()));
  std::size_t first = kOutputGuardBytes;
  for (std::size_t i = 0; i < kOutputGuardBytes; ++i) {
    if (scratch[bytes + i] != kGuardByte) {
      first = i;
      break;
    }
  }
  if (first == kOutputGuardBytes) return std::string();
  std::fill(scratch.begin() + static_cast<std::ptrdiff_t>(bytes), scratch.end(), kGuardByte);
  KF_TRY(device.write(buf, scratch.data(), scratch.size()));
  return "written past its end: guard byte " + std::to_string(first) + " of " +
         std::to_string(kOutputGuardBytes) + " changed (at byte " + std::to_string(bytes + first) +
         " of the buffer)";
}

}  // namespace kforge
