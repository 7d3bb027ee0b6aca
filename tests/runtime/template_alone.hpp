// A built-in template's source as it compiles alone: the backend's prelude and
// the kernel source, with none of the generator's defines, so every tunable,
// the kernel name, dtype, layout and epilogue take their in-file defaults.
#pragma once

#include <string>

#include "templates/builtin_templates.hpp"

namespace kforge::test {

inline std::string alone_source(const TemplateSource& tpl, std::string_view backend) {
  std::string src(prelude_text(backend));
  if (!src.empty() && src.back() != '\n') src += '\n';
  return src + "#line 1 \"" + tpl.manifest.source + "\"\n" + tpl.kernel_text;
}

}  // namespace kforge::test
