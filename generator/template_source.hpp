// A loaded template: its manifest, kernel source text and where they came from.
#pragma once

#include <string>
#include <string_view>

#include "core/result.hpp"
#include "generator/manifest.hpp"

namespace kforge {

struct TemplateSource {
  TemplateManifest manifest;
  std::string manifest_text;  ///< exact bytes, part of the template hash
  std::string kernel_text;    ///< exact bytes of the kernel source
  /// A declared operator's canonical declaration (DIR/operator.json), part
  /// of the hash; empty for a template of a built-in operator.
  std::string operator_text;
  std::string origin;         ///< directory, or "builtin:<name>"
  /// A library template's (manifest `library`) identity where the library
  /// loads: name, version and file (runtime/libraries/library_candidates.hpp). Part of
  /// the hash, so that a library upgrade makes its results stale.
  std::string library_identity;
  /// Why a library template cannot be used in this process (the library is
  /// not installed, a symbol is missing); empty when it can.
  std::string library_unavailable;

  /// Loads DIR/manifest.json, the source file it names and DIR/operator.json
  /// when there is one (its operator must be registered first: TemplateCatalog::add_dir).
  static Result<TemplateSource> load_dir(const std::string& dir);
  static Result<TemplateSource> from_text(std::string manifest_text, std::string kernel_text,
                                          const std::string& origin);

  /// Hash over manifest, kernel source and the backend's prelude text, and a
  /// library template's library identity. Results recorded under another
  /// hash are stale.
  std::string hash(std::string_view prelude_text) const;
};

}  // namespace kforge
