/* kforge.h: the C interface of the kforge runtime, for C programs and other
 * languages (libkforge.so, CMake target kforge::c). It opens a device and the
 * tuning databases, selects a kernel for a problem (explaining why), and
 * launches it on buffers it allocates. The selection rules are those of the
 * C++ Lookup (runtime/lookup/lookup.hpp, docs/runtime.md).
 *
 * Errors: every function that can fail returns a kforge_status; on failure,
 * kforge_last_error() holds a one-line message for the calling thread.
 * Strings returned by kforge stay valid for the lookup's lifetime unless
 * said otherwise. Functions may be called from many threads at once;
 * launches are serialized. */
#ifndef KFORGE_H
#define KFORGE_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define KFORGE_API __attribute__((visibility("default")))
#else
#define KFORGE_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a declaration below is added or changes. */
#define KFORGE_C_API_VERSION                                                                     \
  6 /* 6: kforge_set_online_tuning, kforge_wait_online_tuning;                                  \
       5: kforge_launch enqueues without device_ms, kforge_synchronize, kforge_use_stream;        \
       4: kforge_launch_named; 3: kforge_problem_ext, kforge_select_ext; 2: binary cache options */

typedef enum kforge_status {
  KFORGE_OK = 0,
  KFORGE_ERROR_BAD_INPUT = 1,   /* a file, name or value supplied is wrong */
  KFORGE_ERROR_NOT_FOUND = 2,   /* a named device, template or file does not exist */
  KFORGE_ERROR_COMPILE = 3,     /* a kernel failed to compile */
  KFORGE_ERROR_RESOURCE = 4,    /* a configuration exceeds a device limit */
  KFORGE_ERROR_LAUNCH = 5,      /* a launch or device call failed */
  KFORGE_ERROR_DATABASE = 6,    /* SQLite reported an error */
  KFORGE_ERROR_UNSUPPORTED = 7, /* no template can run the problem here */
  KFORGE_ERROR_INTERNAL = 8
} kforge_status;

typedef struct kforge_lookup kforge_lookup;       /* a device, its databases and caches */
typedef struct kforge_selection kforge_selection; /* owned by the lookup */
typedef struct kforge_buffer kforge_buffer;       /* device memory */

/* Receives each warning (stale or tampered database entries, rejected
 * overrides) once per lookup. */
typedef void (*kforge_warning_fn)(const char* message, void* user_data);

typedef struct kforge_options {
  const char* device;    /* "auto" (also when NULL): the best device present; or "opencl:N" */
  const char* user_db;   /* searched first; NULL or a missing file: none */
  const char* system_db; /* the shipped, read-only database; NULL or missing: none */
  const char* const* template_dirs; /* user template directories, or NULL */
  size_t num_template_dirs;
  kforge_warning_fn on_warning; /* NULL: one line on stderr per warning */
  void* user_data;              /* passed to on_warning */
  int env_overrides;            /* nonzero: read KFORGE_OVERRIDE_<OP>=template:config */
  /* The on-disk cache of compiled kernels, shared with `kforge tune`: a kernel
   * compiled once by any process is loaded, not compiled, by the next. NULL:
   * $KFORGE_CACHE_DIR, else $XDG_CACHE_HOME/kforge/binaries, else
   * $HOME/.cache/kforge/binaries. A directory that cannot be created or
   * written is a warning; kernels are then compiled without it. */
  const char* binary_cache_dir;
  int no_binary_cache; /* nonzero: never read or write the disk cache */
} kforge_options;

typedef struct kforge_dim {
  const char* name; /* "M", "N", "K", "batch" */
  int64_t value;
} kforge_dim;

typedef struct kforge_problem {
  const char* op; /* "gemm" */
  const kforge_dim* dims;
  size_t num_dims; /* dims in any order; those with defaults (batch) may be left out */
  const char* dtype;  /* "f32", "f16", "bf16"; NULL: "f32" */
  const char* layout; /* "NN", "NT", "TN", "TT"; NULL: "NN" */
} kforge_problem;

/* An operator attribute of a problem, e.g. {"kind", "max"} for reduce or
 * {"mask", "causal"} for attention (docs/operators.md lists each operator's
 * attributes, values and defaults). */
typedef struct kforge_attr {
  const char* name;
  const char* value;
} kforge_attr;

/* A problem with what kforge_problem cannot say: a fused epilogue and
 * operator attributes. Set struct_size to sizeof(kforge_problem_ext)
 * (kforge_problem_ext_init does): fields added to the end later are read
 * only from callers whose struct_size covers them. */
typedef struct kforge_problem_ext {
  size_t struct_size;
  kforge_problem problem; /* op, dims, dtype, layout */
  /* "none" (also NULL), "bias", an activation ("relu", "gelu", "silu"), or
   * "bias+ACT"; only operators with a fused epilogue (gemm) accept one. */
  const char* epilogue;
  const kforge_attr* attrs; /* in any order; each name once; those left out take their defaults */
  size_t num_attrs;
} kforge_problem_ext;

typedef enum kforge_arg_kind {
  KFORGE_ARG_BUFFER = 0,
  KFORGE_ARG_INT32 = 1,
  KFORGE_ARG_FLOAT32 = 2
} kforge_arg_kind;

/* One kernel argument, in the operator's order (docs/operators.md lists
 * each operator's). kforge_launch checks the count, the kind of each, an
 * int32 dim against the selected problem's, and each buffer's size against
 * its tensor, and refuses a mismatch naming the argument. */
typedef struct kforge_arg {
  kforge_arg_kind kind;
  kforge_buffer* buffer;
  int32_t i32;
  float f32;
} kforge_arg;

KFORGE_API int kforge_api_version(void); /* KFORGE_C_API_VERSION of the library */
KFORGE_API const char* kforge_status_string(kforge_status status); /* "bad input", ... */
/* The message of the last failed call in this thread; "" after a success. */
KFORGE_API const char* kforge_last_error(void);

/* Defaults: device "auto", no databases, no template directories, warnings
 * on stderr, environment overrides read, the default binary cache. */
KFORGE_API void kforge_options_init(kforge_options* options);
/* Opens the device and both databases (read-only). */
KFORGE_API kforge_status kforge_open(const kforge_options* options, kforge_lookup** out);
/* Frees the lookup, its selections and kernels, and stops its online tunes.
 * Destroy its buffers first. NULL is a no-op; closing a lookup twice, or
 * using it after, is undefined behaviour, as free() twice is. */
KFORGE_API void kforge_close(kforge_lookup* lookup);
KFORGE_API const char* kforge_device_name(const kforge_lookup* lookup);

/* Selects a kernel. Cached per problem: a repeated call takes no lock and
 * allocates nothing. *out stays valid until kforge_close. */
KFORGE_API kforge_status kforge_select(kforge_lookup* lookup, const kforge_problem* problem,
                                       const kforge_selection** out);
/* Zeroes `problem` and sets struct_size: no epilogue, no attributes. */
KFORGE_API void kforge_problem_ext_init(kforge_problem_ext* problem);
/* kforge_select for a problem with an epilogue or attributes (a fused gemm,
 * a reduce with kind=max). Cached per problem like kforge_select. */
KFORGE_API kforge_status kforge_select_ext(kforge_lookup* lookup, const kforge_problem_ext* problem,
                                           const kforge_selection** out);
/* "override", "exact", "nearest", "same_arch", "same_vendor" or "default". */
KFORGE_API const char* kforge_selection_rule(const kforge_selection* selection);
KFORGE_API const char* kforge_selection_template(const kforge_selection* selection);
KFORGE_API const char* kforge_selection_config(const kforge_selection* selection);
/* Every rule tried and every entry skipped, one per line. */
KFORGE_API const char* kforge_selection_explain(const kforge_selection* selection);
/* The problem key the entry was tuned on; "" for override and default. */
KFORGE_API const char* kforge_selection_tuned_problem(const kforge_selection* selection);

/* Makes template:config the first rule for `op` (validated against the
 * template's declarations now, and against each problem at select time);
 * a NULL template_name removes the override. Cached selections are dropped
 * (pointers already returned stay valid). */
KFORGE_API kforge_status kforge_set_override(kforge_lookup* lookup, const char* op,
                                             const char* template_name, const char* config);

KFORGE_API kforge_status kforge_buffer_create(kforge_lookup* lookup, size_t bytes,
                                              kforge_buffer** out);
KFORGE_API kforge_status kforge_buffer_write(kforge_lookup* lookup, kforge_buffer* buffer,
                                             const void* src, size_t bytes);
KFORGE_API kforge_status kforge_buffer_read(kforge_lookup* lookup, const kforge_buffer* buffer,
                                            void* dst, size_t bytes);
KFORGE_API void kforge_buffer_destroy(kforge_buffer* buffer);

/* Generates, compiles and loads the selected kernel (once; later calls
 * return at once). kforge_launch does it too when needed. */
KFORGE_API kforge_status kforge_prepare(kforge_lookup* lookup, const kforge_selection* selection);
/* With device_ms NULL: enqueues the kernel (on the device's queue or
 * stream, or the stream of kforge_use_stream) and returns without waiting,
 * as a CUDA launch does; kforge_buffer_read waits for the kernels enqueued
 * before it, kforge_synchronize for all. With device_ms: a measurement,
 * timed with device events and waited for; *device_ms receives the
 * kernel's device time in ms. Arguments that do not match the operator's
 * contract for the selected problem are KFORGE_ERROR_BAD_INPUT, and
 * nothing is launched. */
KFORGE_API kforge_status kforge_launch(kforge_lookup* lookup, const kforge_selection* selection,
                                       const kforge_arg* args, size_t num_args, double* device_ms);
/* kforge_launch with args[i] named names[i], in any order (a declared
 * operator's argument names, from its operator.json). A name the operator
 * lacks, one given twice or one left out is KFORGE_ERROR_BAD_INPUT naming it. */
KFORGE_API kforge_status kforge_launch_named(kforge_lookup* lookup, const kforge_selection* selection,
                                             const char* const* names, const kforge_arg* args,
                                             size_t num_args, double* device_ms);
/* Waits until every kernel launched on the lookup's device has finished;
 * a kernel's failure while running is reported here. */
KFORGE_API kforge_status kforge_synchronize(kforge_lookup* lookup);
/* The calling thread's launches on a CUDA or HIP device go to `stream` (a
 * CUstream or hipStream_t the caller owns; 0 is the legacy default stream)
 * until called again with KFORGE_OWN_STREAM. KFORGE_ERROR_BAD_INPUT on
 * OpenCL, which launches on its own in-order queue. */
#define KFORGE_OWN_STREAM ((uintptr_t)-1)
KFORGE_API kforge_status kforge_use_stream(kforge_lookup* lookup, uintptr_t stream);

/* Online tuning (docs/runtime.md): mode "background" (a miss answers at once
 * and is tuned in a tuner process; a later select answers "exact"),
 * "blocking" (the first select of a problem tunes it, then answers) or
 * "off". Each problem gets up to max_evals candidates and time_budget_s
 * seconds (0: no limit; not both 0). The tuner is $KFORGE_TUNER, else
 * `kforge` on PATH. Needs options.user_db, where the results land.
 * KFORGE_ONLINE_TUNING, KFORGE_ONLINE_MAX_EVALS and
 * KFORGE_ONLINE_TIME_BUDGET set the same at kforge_open. */
KFORGE_API kforge_status kforge_set_online_tuning(kforge_lookup* lookup, const char* mode, int max_evals,
                                                  double time_budget_s);
/* Waits until no online tune is queued or running, up to timeout_s seconds;
 * KFORGE_ERROR_LAUNCH when they had not ended by then. */
KFORGE_API kforge_status kforge_wait_online_tuning(kforge_lookup* lookup, double timeout_s);

#ifdef __cplusplus
}
#endif

#endif /* KFORGE_H */
