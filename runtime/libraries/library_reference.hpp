// A declared operator's reference in a user's shared library, called through
// the C ABI of kforge_reference.h. The library's code (its constructors
// included) runs only where references are computed, the tuner's worker
// processes: registering the operator checks the file and the symbol in a
// short-lived child process, so a library whose constructor crashes, exits
// or hangs costs that child, not the CLI or a program calling kforge_open.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "generator/external_reference.hpp"
#include "runtime/platform/dynamic_library.hpp"

namespace kforge {

class LibraryReference final : public ExternalReference {
 public:
  /// Checks, in a child process, that `path` loads and exports `symbol`;
  /// errors name `field` of `declaration` (the operator.json), the file and
  /// the symbol, and how loading failed (a signal, an exit, a hang).
  /// Nothing is loaded into this process yet.
  static Result<std::shared_ptr<const LibraryReference>> open(const std::string& path,
                                                              const std::string& symbol,
                                                              const std::string& declaration);

  std::string describe() const override;
  /// Loads the library into this process at the first call.
  Status compute(const Problem& p, std::vector<ReferenceArgument>& args) const override;

 private:
  LibraryReference() = default;
  Status load() const;
  std::string path_, symbol_, declaration_;
  mutable std::once_flag loaded_;
  mutable Status load_status_ = ok_status();
  mutable DynamicLibrary library_;
  mutable void* fn_ = nullptr;
};

}  // namespace kforge
