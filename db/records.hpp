// Plain records stored in the tuning database. The database layer knows no
// backend or tuner types: callers convert to and from these.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kforge {

struct DeviceRecord {
  std::int64_t id = 0;
  std::string key;  ///< hardware identity hash (DeviceInfo::hardware_key)
  std::string backend, vendor, name, arch;
  std::string info_json;  ///< the full fingerprint when first seen
};

struct TemplateRecord {
  std::int64_t id = 0;
  std::string name;
  std::string op;
  std::string hash;  ///< source + manifest + prelude
  std::string manifest_json;
};

struct ProblemRecord {
  std::int64_t id = 0;
  std::string key;  ///< Problem::key()
  std::string op;
  std::string dims_json;  ///< {"K":256,"M":256,"N":256,"batch":1}
  std::string dtype;
  std::string layout;
};

struct SweepRecord {
  std::int64_t id = 0;
  std::string tool_version;
  std::string git_revision;
  std::string command_line;
  std::string settings_json;  ///< strategy, budgets, seed, timing protocol
  std::string device_json;    ///< fingerprint incl. driver and compiler versions at sweep time
  std::string host;
  std::string started_at;     ///< ISO 8601 UTC
  std::string finished_at;    ///< empty while running or after a kill
};

/// One evaluated candidate. Bump kSchemaVersion (database.hpp) when fields change.
struct ResultRecord {
  std::int64_t id = 0;
  std::int64_t sweep_id = 0;
  std::int64_t device_id = 0;
  std::int64_t template_id = 0;
  std::int64_t problem_id = 0;
  std::string config;
  std::string status;  ///< ok, compile_error, resource_limit, launch_error, crash, timeout, wrong_result, not_supported
  std::string reason;  ///< one line for failures (the mismatch report, the first log line, ...)
  double median_ms = 0, p20_ms = 0, p80_ms = 0, min_ms = 0, max_ms = 0;
  std::int64_t count = 0;  ///< timed repetitions
  std::string samples_json;  ///< every timed repetition, ms
  double error_norm = 0;     ///< ||out - ref||_F / ||ref||_F, worst validation run
  double error_ratio = 0;    ///< max over elements of |out - ref| / threshold (<= 1 passes)
  double compile_ms = 0;
  std::string resources_json;
  std::string compile_log;
  std::string created_at;
  // Filled by queries that join names; ignored by add_result.
  std::string template_name, template_hash, problem_key, device_key;
};

/// Version of what a counters row means: the names collectors write and their
/// units (docs/profiling.md). Bump it when a counter is renamed or changes
/// unit or meaning; every row records the version that wrote it.
inline constexpr int kCountersVersion = 1;

/// One hardware counter read for a result, or, with source "unavailable",
/// why a collector read none (docs/database.md, "counters").
struct CounterRecord {
  std::int64_t id = 0;
  std::int64_t result_id = 0;
  std::string source;           ///< ncu, cupti, perf, rocprofiler, model, or unavailable
  std::string collector;        ///< what ran: ncu, cupti, perf, rocprofiler, model
  std::string name;             ///< the counter's name (ncu's metric name, perf's event), or "availability"
  std::optional<double> value;  ///< none on an unavailable row
  std::string unit;             ///< byte, %, cycle, instruction, ...
  std::string note;             ///< unavailable: why ("unavailable: ncu not found on PATH")
  std::string tool;             ///< the collector's tool and version where known ("ncu 2025.1.1")
  int counters_version = kCountersVersion;
  std::string created_at;
};

/// A peak kforge measured on a device with kernels of its own, for the bound
/// verdicts and the report's roofline (docs/profiling.md, "Measured ceilings").
struct MeasuredCeilingRecord {
  std::string device_key;
  std::string name;          ///< copy_bandwidth or fp32_fma
  double value = 0;
  std::string unit;          ///< GB/s or GFLOP/s
  std::string method;        ///< what ran ("float4 copy of 2 x 512 MiB, median of 7 launches")
  std::string tool_version;  ///< the kforge that measured it
  std::string created_at;
};

/// Best ok result per (device, problem, template version).
struct WinnerRecord {
  std::string device_key;
  std::string problem_key;
  std::string op;
  std::string dims_json;
  std::string dtype;
  std::string layout;
  std::string template_name;
  std::string template_hash;
  std::string config;
  double median_ms = 0;
  std::int64_t result_id = 0;
  /// The result's resources_json "library_call" (JSON text), where a library
  /// candidate stored the choice it made (cuBLASLt's algorithm); "" otherwise.
  std::string library_call;
  /// Why the winner disagrees with its result row (missing, not ok, another
  /// configuration, template, problem, device or median); "" when it agrees.
  /// A winner is served only when it agrees.
  std::string disagreement;
  /// How the result was tuned when an online tune inside a program stored
  /// it ("background" or "blocking", its sweep's settings); "" for a sweep
  /// or `kforge tune`.
  std::string online;
  /// The run that stored the result never finished (it was stopped or
  /// killed) and no later run of the problem did: an online tune's such
  /// winner is resumed at the next miss.
  bool sweep_unfinished = false;
};

}  // namespace kforge
