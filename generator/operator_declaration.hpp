// An operator declared in data (operator.json beside a template's manifest):
// problem dimensions, the kernel's arguments in order, how inputs are made,
// cost expressions, tolerances per output and the user's reference.
// Format: docs/user-operators.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"
#include "core/result.hpp"
#include "generator/expr.hpp"
#include "generator/manifest.hpp"
#include "generator/operator.hpp"

namespace kforge {

/// Bump when the operator.json format changes incompatibly.
inline constexpr int kOperatorSchemaVersion = 1;

enum class ArgumentType { kBuffer, kInt32, kFloat32 };
enum class BufferRole { kIn, kOut, kInOut };

/// How a buffer's initial values are made: drawn from the run's seed, a
/// constant, an index ramp (a + b * i), or read from a .npy file.
struct InputInit {
  enum class Kind { kUniform, kNormal, kIntegers, kConstant, kRamp, kNpy };
  Kind kind = Kind::kUniform;
  double a = -1.0, b = 1.0;  ///< low/high, mean/stddev, low/high, value, start/step
  std::string file;          ///< kNpy: resolved path
  bool seeded() const { return kind == Kind::kUniform || kind == Kind::kNormal || kind == Kind::kIntegers; }
};

/// An output element passes when |out - ref| <= abs + rel * |ref| + ulp * ulp_f32(ref).
struct ToleranceSpec {
  double abs = 0.0, rel = 0.0, ulp = 0.0;
};

struct DeclaredArgument {
  std::string name;
  ArgumentType type = ArgumentType::kBuffer;
  std::string field;  ///< "arguments[2]", for error messages
  // Buffers:
  BufferRole role = BufferRole::kIn;
  std::optional<Dtype> dtype;  ///< nullopt: the problem's dtype
  std::optional<FieldExpr> count;
  InputInit init;
  bool poison = false;  ///< an output filled with NaN before each launch
  /// Per problem dtype; the entry for nullopt applies to every other dtype.
  std::map<std::optional<Dtype>, ToleranceSpec> tolerance;
  // Scalars: an integer expression (i32, or f32 from an integer), or an f32 literal.
  std::optional<FieldExpr> value;
  double literal = 0.0;

  bool is_output() const { return type == ArgumentType::kBuffer && role != BufferRole::kIn; }
  Dtype dtype_for(Dtype problem) const { return dtype.value_or(problem); }
  const ToleranceSpec& tolerance_for(Dtype problem) const;
};

struct DeclaredDim {
  std::string name;
  std::optional<std::int64_t> default_value;  ///< nullopt: required
};

/// The user's reference: a host shared library with the C ABI of
/// runtime/libraries/kforge_reference.h, expected outputs as .npy files, or a
/// reference template (a trusted simple kernel of the same operator) run
/// on the device in one fixed configuration.
struct ReferenceSpec {
  enum class Kind { kLibrary, kExpected, kTemplate };
  Kind kind = Kind::kLibrary;
  std::string library;  ///< resolved path
  std::string symbol = "kforge_reference";
  std::map<std::string, std::string> expected;  ///< output name -> resolved .npy path
  std::string template_dir;                     ///< kTemplate: resolved directory
  std::string config;                           ///< kTemplate: its configuration's canonical name
};

struct OperatorDeclaration {
  std::string path;       ///< the file, for error messages
  std::string canonical;  ///< the declaration re-serialized (sorted keys): part of the template hash
  std::string name;
  std::string description;
  std::vector<DeclaredDim> dims;
  std::map<std::string, std::int64_t> default_problem;
  /// Choices that are part of the problem like its dtype (Problem::attrs),
  /// each read by expressions as its value's index.
  std::vector<AttributeSpec> attributes;
  std::vector<DeclaredArgument> arguments;
  std::optional<FieldExpr> flops, bytes;  ///< bytes: nullopt counts every buffer once
  ReferenceSpec reference;

  /// Parses and checks a declaration; relative file names resolve against
  /// the file's directory. Errors are one line "<path>: <field>: <what>".
  static Result<OperatorDeclaration> parse(std::string_view text, const std::string& path);
  /// DIR/operator.json when the directory has one, else the file its
  /// manifest names in `operator_declaration` (one shared by several
  /// templates, "../saxpy.json"); nullopt when there is neither.
  static Result<std::optional<OperatorDeclaration>> load_dir(const std::string& dir);

  /// The names an expression may read: the dims, dtype_bytes, then the attributes.
  std::vector<std::string> names() const;
  const DeclaredArgument* find_argument(std::string_view name) const;
};

std::string_view argument_type_name(ArgumentType t);  ///< "buffer", "i32", "f32"
std::string_view buffer_role_name(BufferRole r);      ///< "in", "out", "inout"

}  // namespace kforge
