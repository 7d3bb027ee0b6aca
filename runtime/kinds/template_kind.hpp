// How a template becomes a loaded kernel, one class per manifest `kind`:
// `source` compiles the instance's source with the device's compiler;
// `library` binds a vendor library call; `triton` compiles a Triton kernel
// in a helper process. The tuner and the lookup both build through
// TemplateKind::build, each with its own BinarySource (the tuner's compiles
// made ahead, the lookup's binary cache); a new kind of template (prebuilt
// binaries) is a new class here.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/hash.hpp"
#include "generator/config.hpp"
#include "generator/instance.hpp"
#include "generator/problem.hpp"
#include "generator/template_source.hpp"
#include "runtime/device/backend.hpp"
#include "runtime/kinds/kernel_origin.hpp"

namespace kforge {

struct BinaryCacheKey;

/// What one build needs: the template, its instance for one problem and configuration.
struct BuildInput {
  Device& device;
  const TemplateSource& tpl;
  const Instance& inst;
  const Problem& problem;
  const Config& config;
  /// What a tune stored of a library call ("library_call"), replayed where
  /// the library leaves a choice; null: chosen afresh.
  nlohmann::json stored_call = nullptr;
};

/// A built kernel and how it came to be.
struct KernelBuild {
  std::unique_ptr<Kernel> kernel;
  KernelOrigin origin = KernelOrigin::kCompiled;
  /// The binary loaded, for kinds that compile; empty for a bound call.
  std::optional<CompiledKernel> binary;
  bool cache_hit = false;
  /// What a bound library call chose where the configuration leaves a
  /// choice (LibraryKernel::call_identity); null otherwise.
  nlohmann::json library_call = nullptr;
};

/// Where a kind that compiles gets its binaries: the caller's policy
/// (compile now, read the binary cache, take a compile made ahead).
class BinarySource {
 public:
  using Compile = std::function<Result<CompiledKernel>()>;
  virtual ~BinarySource() = default;
  /// The binary of `input`; `compile` builds it where none is kept.
  /// Sets out.origin and out.cache_hit.
  virtual Result<CompiledKernel> obtain(const BuildInput& input, const Compile& compile, KernelBuild& out) = 0;
  /// The device refused a binary obtain() found kept (a driver that changed
  /// without its version string): another from `compile`, replacing the kept
  /// one. Default: the device's error stands.
  virtual Result<CompiledKernel> replace_refused(const BuildInput& input, const Compile& compile,
                                                 const Error& refused, KernelBuild& out);
  /// Checked between the compile and the load: what the compiler reports
  /// (spills, registers) may rule the kernel out. Default: admitted.
  virtual Status admit(const BuildInput& input, const CompiledKernel& binary);
};

/// The plain policy: every binary compiled afresh.
class CompileAlways final : public BinarySource {
 public:
  Result<CompiledKernel> obtain(const BuildInput& input, const Compile& compile, KernelBuild& out) override;
};

class TemplateKind {
 public:
  virtual ~TemplateKind() = default;
  virtual TemplateKindId id() const = 0;
  std::string_view name() const { return kforge::name(id()); }
  /// Why `tpl` cannot be built in this process (a library not installed);
  /// empty when it can.
  virtual std::string unavailable(const TemplateSource& tpl) const = 0;
  /// Whether a build has a compile step whose binary can be made ahead of
  /// its use and kept in the binary cache (a bound library call has none).
  virtual bool compiles() const = 0;
  /// The compiler that builds this kind's binaries for `device`'s backend,
  /// the one whose capabilities (combining a batch into one program, code
  /// generation at the first launch) plan a tune's compile pipeline; null
  /// where no Compiler does: a bound library call, or Triton, whose
  /// compiler runs in a helper process one kernel at a time.
  virtual Compiler* compiler(Device& device) const;
  /// The compile step alone (kinds that compile): the binary of `inst`, an
  /// instance of `tpl`, for `device`.
  virtual Result<CompiledKernel> compile(Device& device, const TemplateSource& tpl, const Instance& inst) const;
  /// Builds `input` ready to launch, its binary from `binaries`.
  virtual Result<KernelBuild> build(const BuildInput& input, BinarySource& binaries) const = 0;
  /// Adds what besides the instance's source identifies a built kernel (a
  /// library's identity, the problem and stored call it was bound for).
  virtual void add_identity(Hasher& h, const BuildInput& input) const;
  /// Names in `key` the compiler that builds this kind's binaries where it
  /// is not the device's (make_cache_key put the device's there): Triton
  /// and its version for a Triton template.
  virtual void key_compiler(BinaryCacheKey& key) const;
};

/// The kinds (source_kind.cpp, library_kind.cpp, triton_kind.cpp).
const TemplateKind& source_kind();
const TemplateKind& library_kind();
const TemplateKind& triton_kind();

/// The kind of `tpl` (its manifest's `kind`).
const TemplateKind& template_kind(const TemplateSource& tpl);
const TemplateKind& template_kind(TemplateKindId id);

}  // namespace kforge
