// The C API (kforge.h) over the C++ Lookup. No exception crosses it: each
// entry point catches and reports through kforge_last_error.
#include <cstddef>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "bindings/c/kforge.h"
#include "runtime/device/device_registry.hpp"
#include "runtime/device/foreign_memory.hpp"
#include "runtime/lookup/lookup.hpp"

struct kforge_lookup {
  std::unique_ptr<kforge::Device> device;
  std::unique_ptr<kforge::Lookup> lookup;
};

struct kforge_buffer {
  std::unique_ptr<kforge::Buffer> buffer;
};

namespace {

using kforge::ErrorCode;

thread_local std::string t_last_error;

kforge_status status_of(ErrorCode code) {
  switch (code) {
    case ErrorCode::kBadInput: return KFORGE_ERROR_BAD_INPUT;
    case ErrorCode::kNotFound: return KFORGE_ERROR_NOT_FOUND;
    case ErrorCode::kCompile: return KFORGE_ERROR_COMPILE;
    case ErrorCode::kResource: return KFORGE_ERROR_RESOURCE;
    case ErrorCode::kLaunch: return KFORGE_ERROR_LAUNCH;
    case ErrorCode::kDatabase: return KFORGE_ERROR_DATABASE;
    case ErrorCode::kUnsupported: return KFORGE_ERROR_UNSUPPORTED;
    case ErrorCode::kInternal: return KFORGE_ERROR_INTERNAL;
  }
  return KFORGE_ERROR_INTERNAL;
}

kforge_status fail(kforge_status s, const std::string& message) {
  t_last_error = message;
  return s;
}
kforge_status fail(const kforge::Error& e) { return fail(status_of(e.code), e.message); }

/// Runs `body` (returning kforge_status) with the error cleared first and
/// every exception turned into KFORGE_ERROR_INTERNAL.
template <typename F>
kforge_status guarded(F&& body) noexcept {
  t_last_error.clear();
  try {
    return body();
  } catch (const kforge::ErrorException& e) {
    return fail(e.error());
  } catch (const std::bad_alloc&) {
    return fail(KFORGE_ERROR_RESOURCE, "out of host memory (std::bad_alloc)");
  } catch (const std::exception& e) {
    return fail(KFORGE_ERROR_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(KFORGE_ERROR_INTERNAL, "internal error");
  }
}

const kforge::Selection& selection_of(const kforge_selection* s) {
  return *reinterpret_cast<const kforge::Selection*>(s);
}

/// The C arguments as KernelArgs; `who` names the call in an error.
kforge::Result<std::vector<kforge::KernelArg>> kernel_args(const char* who, const kforge_arg* args,
                                                           size_t num_args) {
  std::vector<kforge::KernelArg> a;
  a.reserve(num_args);
  for (std::size_t i = 0; i < num_args; ++i) {
    switch (args[i].kind) {
      case KFORGE_ARG_BUFFER:
        if (!args[i].buffer) {
          return kforge::Error::bad_input(std::string(who) + ": argument " + std::to_string(i) +
                                          " has no buffer");
        }
        a.push_back(kforge::KernelArg::of(*args[i].buffer->buffer));
        break;
      case KFORGE_ARG_INT32:
        a.push_back(kforge::KernelArg::of(args[i].i32));
        break;
      case KFORGE_ARG_FLOAT32:
        a.push_back(kforge::KernelArg::of(args[i].f32));
        break;
      default:
        return kforge::Error::bad_input(std::string(who) + ": argument " + std::to_string(i) +
                                        " has an unknown kind");
    }
  }
  return a;
}

/// Fills `p` from a C problem, reusing its storage: in steady state (the
/// same dim names as the previous call in this thread) nothing is allocated.
kforge_status fill_problem(const kforge_problem& in, kforge::Problem& p) {
  if (in.op == nullptr) return fail(KFORGE_ERROR_BAD_INPUT, "problem: op is NULL");
  if (in.num_dims > 0 && in.dims == nullptr) return fail(KFORGE_ERROR_BAD_INPUT, "problem: dims is NULL");
  p.op.assign(in.op);
  const auto dtype = kforge::parse_dtype(in.dtype ? in.dtype : "f32");
  if (!dtype) return fail(KFORGE_ERROR_BAD_INPUT, std::string("problem: unknown dtype '") + in.dtype + "'");
  p.dtype = *dtype;
  const auto layout = kforge::parse_layout(in.layout ? in.layout : "NN");
  if (!layout) return fail(KFORGE_ERROR_BAD_INPUT, std::string("problem: unknown layout '") + in.layout + "'");
  p.layout = *layout;

  // The same names as before: overwrite values in place.
  bool same = in.num_dims == p.dims.size() && in.num_dims <= 64;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; same && i < in.num_dims; ++i) {
    if (in.dims[i].name == nullptr) return fail(KFORGE_ERROR_BAD_INPUT, "problem: a dim name is NULL");
    std::size_t index = 0;
    auto it = p.dims.begin();
    for (; it != p.dims.end() && it->first != in.dims[i].name; ++it) ++index;
    if (it == p.dims.end() || (seen >> index) & 1u) {
      same = false;
      break;
    }
    seen |= std::uint64_t{1} << index;
    it->second = in.dims[i].value;
  }
  if (same) return KFORGE_OK;
  p.dims.clear();
  for (std::size_t i = 0; i < in.num_dims; ++i) {
    if (in.dims[i].name == nullptr) return fail(KFORGE_ERROR_BAD_INPUT, "problem: a dim name is NULL");
    if (!p.dims.emplace(in.dims[i].name, in.dims[i].value).second) {
      return fail(KFORGE_ERROR_BAD_INPUT, std::string("problem: dim ") + in.dims[i].name + " is given twice");
    }
  }
  return KFORGE_OK;
}

/// The epilogue and attributes of `in` into `p`; like fill_problem, the same
/// attributes as the previous call in this thread allocate nothing.
kforge_status fill_extension(const char* epilogue, const kforge_attr* attrs, std::size_t num_attrs,
                             kforge::Problem& p) {
  if (epilogue == nullptr) {
    p.epilogue = {};
  } else {
    auto parsed = kforge::parse_epilogue(epilogue);
    if (!parsed.ok()) return fail(KFORGE_ERROR_BAD_INPUT, "problem: " + parsed.error().message);
    p.epilogue = *parsed;
  }
  if (num_attrs > 0 && attrs == nullptr) return fail(KFORGE_ERROR_BAD_INPUT, "problem: attrs is NULL");
  for (std::size_t i = 0; i < num_attrs; ++i) {
    if (attrs[i].name == nullptr || attrs[i].value == nullptr) {
      return fail(KFORGE_ERROR_BAD_INPUT,
                  "problem: attribute " + std::to_string(i) + " has a NULL name or value");
    }
  }
  bool same = num_attrs == p.attrs.size();
  for (std::size_t i = 0; same && i < num_attrs; ++i) {
    auto it = p.attrs.find(attrs[i].name);
    same = it != p.attrs.end() && it->second == attrs[i].value;
  }
  if (same) return KFORGE_OK;
  p.attrs.clear();
  for (std::size_t i = 0; i < num_attrs; ++i) {
    if (!p.attrs.emplace(attrs[i].name, attrs[i].value).second) {
      return fail(KFORGE_ERROR_BAD_INPUT,
                  std::string("problem: attribute ") + attrs[i].name + " is given twice");
    }
  }
  return KFORGE_OK;
}

/// The problem every select call fills in this thread (see fill_problem).
kforge::Problem& thread_problem() {
  thread_local kforge::Problem scratch;
  return scratch;
}

kforge_status select_filled(kforge_lookup* lookup, const kforge::Problem& p, const kforge_selection** out) {
  auto sel = lookup->lookup->select_ref(p);
  if (!sel.ok()) return fail(sel.error());
  *out = reinterpret_cast<const kforge_selection*>(*sel);
  return KFORGE_OK;
}

}  // namespace

extern "C" {

int kforge_api_version(void) { return KFORGE_C_API_VERSION; }

const char* kforge_status_string(kforge_status status) {
  switch (status) {
    case KFORGE_OK: return "ok";
    case KFORGE_ERROR_BAD_INPUT: return "bad input";
    case KFORGE_ERROR_NOT_FOUND: return "not found";
    case KFORGE_ERROR_COMPILE: return "compile error";
    case KFORGE_ERROR_RESOURCE: return "resource limit";
    case KFORGE_ERROR_LAUNCH: return "launch error";
    case KFORGE_ERROR_DATABASE: return "database error";
    case KFORGE_ERROR_UNSUPPORTED: return "unsupported";
    case KFORGE_ERROR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

const char* kforge_last_error(void) { return t_last_error.c_str(); }

void kforge_options_init(kforge_options* options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof *options);
  options->env_overrides = 1;
}

kforge_status kforge_open(const kforge_options* options, kforge_lookup** out) {
  return guarded([&] {
    if (out == nullptr) return fail(KFORGE_ERROR_BAD_INPUT, "kforge_open: out is NULL");
    *out = nullptr;
    kforge_options defaults;
    kforge_options_init(&defaults);
    const kforge_options& o = options ? *options : defaults;
    auto handle = std::make_unique<kforge_lookup>();
    auto device = kforge::open_device(o.device ? o.device : "auto");
    if (!device.ok()) return fail(device.error());
    handle->device = std::move(*device);
    auto catalog = kforge::TemplateCatalog::builtin();
    if (!catalog.ok()) return fail(catalog.error());
    for (std::size_t i = 0; i < o.num_template_dirs; ++i) {
      if (o.template_dirs == nullptr || o.template_dirs[i] == nullptr) {
        return fail(KFORGE_ERROR_BAD_INPUT, "kforge_open: a template directory is NULL");
      }
      if (auto added = catalog->add_dir(o.template_dirs[i]); !added.ok()) return fail(added.error());
    }
    kforge::LookupOptions lo;
    lo.user_db = o.user_db ? o.user_db : "";
    lo.system_db = o.system_db ? o.system_db : "";
    lo.env_overrides = o.env_overrides != 0;
    lo.binary_cache_dir = o.binary_cache_dir ? o.binary_cache_dir : "";
    lo.use_binary_cache = o.no_binary_cache == 0;
    if (o.on_warning != nullptr) {
      lo.on_warning = [fn = o.on_warning, user = o.user_data](const std::string& m) { fn(m.c_str(), user); };
    }
    auto lookup = kforge::Lookup::open(lo, *handle->device, std::move(*catalog));
    if (!lookup.ok()) return fail(lookup.error());
    handle->lookup = std::move(*lookup);
    *out = handle.release();
    return KFORGE_OK;
  });
}

void kforge_close(kforge_lookup* lookup) { delete lookup; }

const char* kforge_device_name(const kforge_lookup* lookup) {
  return lookup ? lookup->device->info().name.c_str() : "";
}

kforge_status kforge_select(kforge_lookup* lookup, const kforge_problem* problem,
                            const kforge_selection** out) {
  return guarded([&] {
    if (!lookup || !problem || !out) return fail(KFORGE_ERROR_BAD_INPUT, "kforge_select: NULL argument");
    kforge::Problem& scratch = thread_problem();
    if (kforge_status s = fill_problem(*problem, scratch); s != KFORGE_OK) return s;
    if (kforge_status s = fill_extension(nullptr, nullptr, 0, scratch); s != KFORGE_OK) return s;
    return select_filled(lookup, scratch, out);
  });
}

void kforge_problem_ext_init(kforge_problem_ext* problem) {
  if (problem == nullptr) return;
  std::memset(problem, 0, sizeof *problem);
  problem->struct_size = sizeof *problem;
}

kforge_status kforge_select_ext(kforge_lookup* lookup, const kforge_problem_ext* problem,
                                const kforge_selection** out) {
  return guarded([&] {
    if (!lookup || !problem || !out) return fail(KFORGE_ERROR_BAD_INPUT, "kforge_select_ext: NULL argument");
    // Every field of this version; a later version's callers pass more.
    constexpr std::size_t kFirstVersionSize = offsetof(kforge_problem_ext, num_attrs) + sizeof(size_t);
    if (problem->struct_size < kFirstVersionSize) {
      return fail(KFORGE_ERROR_BAD_INPUT, "kforge_select_ext: struct_size is " +
                                              std::to_string(problem->struct_size) + ", at least " +
                                              std::to_string(kFirstVersionSize) +
                                              " expected (call kforge_problem_ext_init)");
    }
    kforge::Problem& scratch = thread_problem();
    if (kforge_status s = fill_problem(problem->problem, scratch); s != KFORGE_OK) return s;
    if (kforge_status s = fill_extension(problem->epilogue, problem->attrs, problem->num_attrs, scratch);
        s != KFORGE_OK) {
      return s;
    }
    return select_filled(lookup, scratch, out);
  });
}

const char* kforge_selection_rule(const kforge_selection* s) { return s ? name(selection_of(s).rule).data() : ""; }
const char* kforge_selection_template(const kforge_selection* s) {
  return s ? selection_of(s).template_name.c_str() : "";
}
const char* kforge_selection_config(const kforge_selection* s) { return s ? selection_of(s).config.c_str() : ""; }
const char* kforge_selection_explain(const kforge_selection* s) {
  return s ? selection_of(s).explanation.c_str() : "";
}
const char* kforge_selection_tuned_problem(const kforge_selection* s) {
  return s ? selection_of(s).tuned_problem.c_str() : "";
}

kforge_status kforge_set_override(kforge_lookup* lookup, const char* op, const char* template_name,
                                  const char* config) {
  return guarded([&] {
    if (!lookup || !op) return fail(KFORGE_ERROR_BAD_INPUT, "kforge_set_override: NULL argument");
    if (template_name == nullptr) {
      lookup->lookup->clear_override(op);
      return KFORGE_OK;
    }
    auto set = lookup->lookup->set_override(op, template_name, config ? config : "");
    return set.ok() ? KFORGE_OK : fail(set.error());
  });
}

kforge_status kforge_buffer_create(kforge_lookup* lookup, size_t bytes, kforge_buffer** out) {
  return guarded([&] {
    if (!lookup || !out) return fail(KFORGE_ERROR_BAD_INPUT, "kforge_buffer_create: NULL argument");
    *out = nullptr;
    auto buffer = lookup->device->allocate(bytes);
    if (!buffer.ok()) return fail(buffer.error());
    *out = new kforge_buffer{std::move(*buffer)};
    return KFORGE_OK;
  });
}

kforge_status kforge_buffer_write(kforge_lookup* lookup, kforge_buffer* buffer, const void* src,
                                  size_t bytes) {
  return guarded([&] {
    if (!lookup || !buffer || (!src && bytes)) return fail(KFORGE_ERROR_BAD_INPUT, "kforge_buffer_write: NULL argument");
    auto w = lookup->device->write(*buffer->buffer, src, bytes);
    return w.ok() ? KFORGE_OK : fail(w.error());
  });
}

kforge_status kforge_buffer_read(kforge_lookup* lookup, const kforge_buffer* buffer, void* dst,
                                 size_t bytes) {
  return guarded([&] {
    if (!lookup || !buffer || (!dst && bytes)) return fail(KFORGE_ERROR_BAD_INPUT, "kforge_buffer_read: NULL argument");
    auto r = lookup->device->read(*buffer->buffer, dst, bytes);
    return r.ok() ? KFORGE_OK : fail(r.error());
  });
}

void kforge_buffer_destroy(kforge_buffer* buffer) { delete buffer; }

kforge_status kforge_prepare(kforge_lookup* lookup, const kforge_selection* selection) {
  return guarded([&] {
    if (!lookup || !selection) return fail(KFORGE_ERROR_BAD_INPUT, "kforge_prepare: NULL argument");
    auto p = lookup->lookup->prepare(selection_of(selection));
    return p.ok() ? KFORGE_OK : fail(p.error());
  });
}

kforge_status kforge_launch(kforge_lookup* lookup, const kforge_selection* selection,
                            const kforge_arg* args, size_t num_args, double* device_ms) {
  return guarded([&] {
    if (!lookup || !selection || (!args && num_args)) {
      return fail(KFORGE_ERROR_BAD_INPUT, "kforge_launch: NULL argument");
    }
    auto a = kernel_args("kforge_launch", args, num_args);
    if (!a.ok()) return fail(a.error());
    if (!device_ms) {
      auto queued = lookup->lookup->enqueue(selection_of(selection), *a);
      return queued.ok() ? KFORGE_OK : fail(queued.error());
    }
    auto ms = lookup->lookup->launch(selection_of(selection), *a);
    if (!ms.ok()) return fail(ms.error());
    *device_ms = *ms;
    return KFORGE_OK;
  });
}

kforge_status kforge_launch_named(kforge_lookup* lookup, const kforge_selection* selection,
                                  const char* const* names, const kforge_arg* args, size_t num_args,
                                  double* device_ms) {
  return guarded([&] {
    if (!lookup || !selection || ((!args || !names) && num_args)) {
      return fail(KFORGE_ERROR_BAD_INPUT, "kforge_launch_named: NULL argument");
    }
    auto a = kernel_args("kforge_launch_named", args, num_args);
    if (!a.ok()) return fail(a.error());
    std::vector<kforge::NamedArg> named;
    for (std::size_t i = 0; i < num_args; ++i) {
      if (!names[i]) {
        return fail(KFORGE_ERROR_BAD_INPUT,
                    "kforge_launch_named: argument " + std::to_string(i) + " has no name");
      }
      named.push_back({names[i], (*a)[i]});
    }
    if (!device_ms) {
      auto queued = lookup->lookup->enqueue_named(selection_of(selection), named);
      return queued.ok() ? KFORGE_OK : fail(queued.error());
    }
    auto ms = lookup->lookup->launch_named(selection_of(selection), named);
    if (!ms.ok()) return fail(ms.error());
    *device_ms = *ms;
    return KFORGE_OK;
  });
}

kforge_status kforge_synchronize(kforge_lookup* lookup) {
  return guarded([&] {
    if (!lookup) return fail(KFORGE_ERROR_BAD_INPUT, "kforge_synchronize: NULL argument");
    auto done = lookup->lookup->synchronize();
    return done.ok() ? KFORGE_OK : fail(done.error());
  });
}

kforge_status kforge_use_stream(kforge_lookup* lookup, uintptr_t stream) {
  return guarded([&] {
    if (!lookup) return fail(KFORGE_ERROR_BAD_INPUT, "kforge_use_stream: NULL argument");
    kforge::ForeignMemory* foreign = kforge::foreign_memory(lookup->lookup->device());
    if (!foreign) {
      return fail(KFORGE_ERROR_BAD_INPUT, "kforge_use_stream: the " + lookup->lookup->device().info().backend +
                                              " backend launches on its own queue; streams are for CUDA and HIP");
    }
    if (stream == KFORGE_OWN_STREAM)
      foreign->use_own_stream();
    else
      foreign->use_caller_stream(stream);
    return KFORGE_OK;
  });
}

kforge_status kforge_set_online_tuning(kforge_lookup* lookup, const char* mode, int max_evals,
                                      double time_budget_s) {
  return guarded([&] {
    if (!lookup || !mode) return fail(KFORGE_ERROR_BAD_INPUT, "kforge_set_online_tuning: NULL argument");
    const auto parsed = kforge::parse_online_mode(mode);
    if (!parsed) {
      return fail(KFORGE_ERROR_BAD_INPUT, std::string("kforge_set_online_tuning: mode '") + mode +
                                              "': expected off, background or blocking");
    }
    if (max_evals < 0 || !(time_budget_s >= 0)) {
      return fail(KFORGE_ERROR_BAD_INPUT, "kforge_set_online_tuning: a negative budget");
    }
    kforge::OnlineTuningOptions options;
    options.mode = *parsed;
    options.max_evals = max_evals;
    options.time_budget_s = time_budget_s;
    auto set = lookup->lookup->set_online_tuning(options);
    return set.ok() ? KFORGE_OK : fail(set.error());
  });
}

kforge_status kforge_wait_online_tuning(kforge_lookup* lookup, double timeout_s) {
  return guarded([&] {
    if (!lookup) return fail(KFORGE_ERROR_BAD_INPUT, "kforge_wait_online_tuning: NULL argument");
    if (lookup->lookup->wait_online_idle(timeout_s)) return KFORGE_OK;
    return fail(KFORGE_ERROR_LAUNCH, "kforge_wait_online_tuning: online tunes still running after " +
                                         std::to_string(timeout_s) + " s");
  });
}

}  // extern "C"
