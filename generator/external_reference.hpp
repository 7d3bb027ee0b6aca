// A declared operator's reference computed by code outside kforge (a user's
// shared library, runtime/libraries/library_reference.hpp), behind a small interface so
// that the generator, the lowest layer, does not load libraries itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "generator/operator_declaration.hpp"
#include "generator/problem.hpp"

namespace kforge {

/// One kernel argument as the reference sees it: buffers as doubles (inputs
/// hold exactly what the kernel reads; outputs are to be written), scalars as
/// their value.
struct ReferenceArgument {
  const DeclaredArgument* declared = nullptr;
  Dtype dtype = Dtype::kF32;
  std::vector<double> data;
  double value = 0.0;
};

class ExternalReference {
 public:
  virtual ~ExternalReference() = default;
  /// "library /path/libref.so symbol saxpy_reference": named in every report.
  virtual std::string describe() const = 0;
  /// Runs the reference on `args` in place; an error says what it returned.
  virtual Status compute(const Problem& p, std::vector<ReferenceArgument>& args) const = 0;
};

}  // namespace kforge
