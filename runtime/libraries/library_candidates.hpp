// Library templates (manifest `library`): whether their library loads here,
// with what identity, and the call a configuration binds to
// (docs/vendor-libraries.md).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/result.hpp"
#include "generator/config.hpp"
#include "generator/instance.hpp"
#include "generator/problem.hpp"
#include "generator/template_source.hpp"
#include "runtime/device/backend.hpp"

namespace kforge {

struct LibraryAvailability {
  std::string identity;     ///< name, version and file of the library loaded; empty when unavailable
  std::string unavailable;  ///< why it cannot be used here; empty when it can
};

/// Loads `library` ("clblast", "cublaslt", "hipblaslt") once per process.
LibraryAvailability library_availability(std::string_view library);

/// Fills a library template's library_identity and library_unavailable;
/// a kernel template is left as it is.
void resolve_library(TemplateSource& tpl);

/// The library call of `config` for `problem` on `device`, ready to launch
/// (LibraryKernel). `stored` is what a tune stored of the call
/// (LibraryKernel::call_identity, a result's "library_call"), replayed
/// where the library leaves a choice; null: chosen afresh. kUnsupported
/// where the library is unavailable or cannot run on this device, naming why.
Result<std::unique_ptr<Kernel>> bind_library_call(Device& device, const TemplateSource& tpl,
                                                  const Instance& inst, const Problem& problem,
                                                  const Config& config,
                                                  const nlohmann::json& stored = nullptr);

}  // namespace kforge
