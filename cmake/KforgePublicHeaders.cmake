# The public headers: what `cmake --install` puts in P/include/kforge, in
# their source folders, and all of it. A consumer opens a device, selects and launches through Lookup,
# describes problems and operators, tunes from C++ and reads or exchanges
# tuning databases with these alone; C programs need only kforge.h, and a
# declared operator's reference library only kforge_reference.h. Every
# header here compiles on its own from the installed tree, and the installed
# directory holds exactly this list (ctest consumer_install,
# tests/consumer/run_consumer.cmake). A header a public one includes is
# public too; the rest (workers and their protocol, driver wrappers, compile
# queues, readers of compiler output) stay inside the build.
set(KFORGE_PUBLIC_HEADERS
  # C API (libkforge.so), and the C ABI a declared operator's reference library exports.
  bindings/c/kforge.h runtime/libraries/kforge_reference.h
  # Devices: open one, its identity and the Device/Compiler interfaces.
  runtime/device/device_registry.hpp runtime/device/backend.hpp runtime/device/device_info.hpp
  # Device exposes its cache flush method and clock samples.
  runtime/device/cache_flush.hpp runtime/profiling/clock_reader.hpp
  # A compiled kernel's format and foreign launch ABI, and Triton binaries loaded without Python.
  runtime/device/launch_abi.hpp runtime/kinds/triton_binary.hpp
  # The lookup, what it holds by value on its hot path, and its named launch arguments.
  runtime/lookup/lookup.hpp runtime/catalog/template_catalog.hpp runtime/kinds/binary_cache.hpp runtime/catalog/entry_check.hpp
  runtime/kinds/kernel_origin.hpp runtime/lookup/selection_cache.hpp runtime/lookup/named_arguments.hpp
  runtime/libraries/library_policy.hpp
  # Online tuning's options, held by LookupOptions, and the job it starts.
  runtime/lookup/online_tuning.hpp runtime/lookup/online_job.hpp
  # Problems, operators, templates and their instances.
  core/result.hpp generator/problem.hpp core/dtype.hpp generator/operator.hpp
  generator/gemm_operator.hpp generator/expr.hpp generator/config.hpp generator/manifest.hpp
  generator/template_source.hpp generator/triton_spec.hpp generator/instance.hpp generator/device_limits.hpp
  generator/hardware_identity.hpp
  # The tuning database and its JSON interchange.
  db/database.hpp db/records.hpp db/json_interchange.hpp db/tuning_set.hpp
  # Tuning from C++: the tuner, its strategies and measurement protocol, and
  # the summary a run returns (its outcomes and warm starts).
  tuner/tuner.hpp tuner/search/strategy.hpp tuner/candidate_status.hpp tuner/measure/measurement.hpp
  tuner/measure/timing_stats.hpp tuner/worker/worker_timeouts.hpp tuner/tune_summary.hpp tuner/candidate_outcome.hpp
  tuner/search/warm_start.hpp)
