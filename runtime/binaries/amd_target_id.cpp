#include "runtime/binaries/amd_target_id.hpp"

namespace kforge {

AmdTargetId parse_amd_target_id(std::string_view id) {
  AmdTargetId out;
  const std::string_view head = id.substr(0, id.find(':'));
  // The processor is the last field of the triple either way.
  const auto dash = head.rfind('-');
  out.processor = std::string(dash == std::string_view::npos ? head : head.substr(dash + 1));
  for (std::size_t p = id.find(':'); p != std::string_view::npos;) {
    const std::size_t next = id.find(':', p + 1);
    std::string_view f = id.substr(p + 1, next == std::string_view::npos ? std::string_view::npos : next - p - 1);
    if (!f.empty() && (f.back() == '+' || f.back() == '-')) {
      if (!out.features.empty()) out.features += ',';
      out.features += f.back();
      out.features.append(f.substr(0, f.size() - 1));
    }
    p = next;
  }
  return out;
}

}  // namespace kforge
