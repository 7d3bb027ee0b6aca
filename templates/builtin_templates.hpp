// The templates and preludes compiled into kforge (templates/ embedded as text).
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "generator/template_source.hpp"

namespace kforge {

struct EmbeddedFile {
  std::string_view path;  ///< relative to templates/, e.g. "gemm/simt_tiled/manifest.json"
  std::string_view text;
};

std::span<const EmbeddedFile> embedded_template_files();

/// The prelude for a backend ("opencl", "cuda", "hip"): prelude/BACKEND.h
/// followed by the epilogue all backends share (prelude/epilogue.h); empty
/// when the backend has none.
std::string_view prelude_text(std::string_view backend);

/// Every built-in template (each OP/NAME/manifest.json with its source), parsed.
/// A built-in manifest that fails to parse is a bug: the error names it.
Result<std::vector<TemplateSource>> builtin_templates();

}  // namespace kforge
