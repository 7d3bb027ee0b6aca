// The size of a template's cartesian space (the product of the number of
// declared values of its parameters), exact at any size: spaces with dozens
// of parameters overflow 64 bits.
#pragma once

#include <cstdint>
#include <string>

#include "generator/manifest.hpp"

namespace kforge {

struct CartesianSize {
  std::uint64_t value = 1;  ///< the size, or 2^64 - 1 where it does not fit
  bool overflows = false;   ///< the size is 2^64 or more: `value` is a lower bound
  std::string decimal = "1";  ///< the exact size in decimal digits, at any size
};

CartesianSize cartesian_size(const TemplateManifest& manifest);

}  // namespace kforge
