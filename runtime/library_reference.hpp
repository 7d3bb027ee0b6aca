// A declared operator's reference in a user's shared library, called through
// the C ABI of kforge_reference.h.
#pragma once

#include <memory>
#include <string>

#include "dynamic_library.hpp"
#include "external_reference.hpp"

namespace kforge {

class LibraryReference final : public ExternalReference {
 public:
  /// Opens `path` and binds `symbol`; errors name `field` of `declaration`
  /// (the operator.json), the file and the symbol. Nothing is called yet.
  static Result<std::shared_ptr<const LibraryReference>> open(const std::string& path,
                                                              const std::string& symbol,
                                                              const std::string& declaration);

  std::string describe() const override;
  Status compute(const Problem& p, std::vector<ReferenceArgument>& args) const override;

 private:
  LibraryReference() = default;
  DynamicLibrary library_;
  std::string symbol_;
  void* fn_ = nullptr;
};

}  // namespace kforge
