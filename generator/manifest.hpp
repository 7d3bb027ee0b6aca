// A template's manifest (JSON): tunable parameters, constraints, launch
// geometry, targets, dtypes, layouts and envelope. Format: docs/templates.md.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"
#include "core/result.hpp"
#include "generator/config.hpp"
#include "generator/expr.hpp"
#include "generator/triton_spec.hpp"

namespace kforge {

/// Bump when the manifest format changes incompatibly.
inline constexpr int kManifestSchemaVersion = 1;

/// How a template becomes a kernel (manifest `kind`): compiled from its
/// source, a vendor library call bound in its place, or a Triton kernel
/// compiled by Triton. The build itself is the runtime's
/// (runtime/kinds/template_kind.hpp).
enum class TemplateKindId { kSource, kLibrary, kTriton };

/// "source", "library", "triton".
std::string_view name(TemplateKindId kind);
/// The kind named `text`; nullopt when kforge has no such kind.
std::optional<TemplateKindId> parse_template_kind(std::string_view text);

struct Parameter {
  std::string name;
  std::vector<std::int64_t> values;  ///< declared values, in manifest order
  std::int64_t default_value = 0;
  std::string doc;
};

/// An expression together with the manifest field it came from ("constraints[2]").
struct FieldExpr {
  std::string field;
  Expr expr;
};

struct TemplateManifest {
  std::string path;  ///< file the manifest was read from, for error messages
  int schema_version = kManifestSchemaVersion;
  std::string name;         ///< template name, e.g. "gemm_simt_tiled"
  std::string op;           ///< operator it implements, e.g. "gemm"
  std::string description;
  /// `kind`; absent: `library` when the manifest names one, else `source`.
  TemplateKindId kind = TemplateKindId::kSource;
  std::string source;       ///< kernel source file name, relative to the manifest
  std::string kernel;       ///< entry-point base name in the source
  /// A vendor library called instead of a compiled kernel ("clblast",
  /// "cublaslt", "hipblaslt"); empty for a kernel template. Such a template
  /// has no source; its parameters choose the library's call form or algorithm.
  std::string library;
  /// A Triton template's arguments, constexprs, options and hints; null for other kinds.
  std::shared_ptr<const TritonSpec> triton;
  std::vector<std::string> targets;  ///< "opencl", "cuda", "hip"
  std::vector<std::string> arch_guard;  ///< required architectures; empty = portable
  std::vector<Dtype> dtypes;
  std::vector<Layout> layouts;
  std::vector<Parameter> parameters;  ///< declared order = enumeration order
  std::vector<FieldExpr> constraints;  ///< all must be non-zero for a valid configuration
  std::vector<FieldExpr> envelope;     ///< problem predicates the template requires
  std::array<FieldExpr, 3> block;      ///< threads per block, x y z
  std::array<FieldExpr, 3> grid;       ///< blocks per grid, x y z
  std::optional<FieldExpr> local_memory_bytes;  ///< static local memory use

  /// Parses and checks a manifest. Every error names `path`, the field and,
  /// for expressions, the position: "m.json: constraints[1]: position 4: unknown name 'BX'".
  /// Checks: JSON syntax, required fields and types, known operator, legal and
  /// unique parameter names, non-empty values, default among values, every
  /// name an expression reads is a parameter, an operator dim/extra name or a
  /// device limit, and the default configuration satisfies every constraint
  /// and evaluates every geometry expression (no division by zero) on
  /// DeviceLimits::baseline() and the probe problem (each dim 256, batch 1).
  static Result<TemplateManifest> parse(std::string_view json_text, const std::string& path);

  Config default_config() const;
  const Parameter* find_parameter(std::string_view name) const;
  bool supports(Dtype d) const;
  bool supports(const Layout& l) const;
  bool supports_target(std::string_view backend) const;
  bool is_library() const { return kind == TemplateKindId::kLibrary; }
  /// Whether the template has a kernel source file (`source`): every kind but a library call.
  bool has_source_file() const { return kind != TemplateKindId::kLibrary; }
  /// True when every value of `c` is declared for its parameter and every parameter is set.
  /// Values are not trusted: this check runs before any source is generated.
  Status check_declared(const Config& c) const;
  /// check_declared of a configuration given by its canonical name (as
  /// stored in a database): a name that does not parse fails too.
  Status check_declared_name(std::string_view canonical) const;
};

}  // namespace kforge
