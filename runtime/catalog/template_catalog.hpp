// The templates kforge can use: the built-in ones plus user template
// directories (--template DIR), looked up by operator and name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "generator/template_source.hpp"

namespace kforge {

class TemplateCatalog {
 public:
  /// Built-in templates only.
  static Result<TemplateCatalog> builtin();
  /// Adds a user template directory; a user template with a built-in's name replaces it.
  Status add_dir(const std::string& dir);

  const std::vector<TemplateSource>& all() const { return templates_; }
  /// The user template directories added, in order (a tuner process of the
  /// lookup's loads the same ones).
  const std::vector<std::string>& dirs() const { return dirs_; }
  /// Templates implementing `op` that target `backend`, in name order.
  std::vector<const TemplateSource*> for_op(std::string_view op, std::string_view backend) const;
  const TemplateSource* find(std::string_view name) const;

 private:
  std::vector<TemplateSource> templates_;
  std::vector<std::string> dirs_;
};

}  // namespace kforge
