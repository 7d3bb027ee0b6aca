// Schema migrations of the tuning database. Never edit a shipped migration:
// append a new one, bump kSchemaVersion and update docs/database.md.
#include "db/schema.hpp"

#include <iterator>

#include "db/database.hpp"

namespace kforge::schema {
namespace {

// Version 1: the initial tables.
constexpr const char* kV1 = R"sql(
CREATE TABLE devices (
  id         INTEGER PRIMARY KEY,
  key        TEXT NOT NULL UNIQUE,
  backend    TEXT NOT NULL DEFAULT '',
  vendor     TEXT NOT NULL DEFAULT '',
  name       TEXT NOT NULL DEFAULT '',
  arch       TEXT NOT NULL DEFAULT '',
  info_json  TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL
);
CREATE TABLE templates (
  id            INTEGER PRIMARY KEY,
  name          TEXT NOT NULL,
  op            TEXT NOT NULL DEFAULT '',
  hash          TEXT NOT NULL,
  manifest_json TEXT NOT NULL DEFAULT '',
  created_at    TEXT NOT NULL,
  UNIQUE (name, hash)
);
CREATE TABLE problems (
  id        INTEGER PRIMARY KEY,
  key       TEXT NOT NULL UNIQUE,
  op        TEXT NOT NULL DEFAULT '',
  dims_json TEXT NOT NULL DEFAULT '',
  dtype     TEXT NOT NULL DEFAULT '',
  layout    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX problems_by_op ON problems (op, dtype, layout);
CREATE TABLE sweeps (
  id            INTEGER PRIMARY KEY,
  tool_version  TEXT NOT NULL DEFAULT '',
  git_revision  TEXT NOT NULL DEFAULT '',
  command_line  TEXT NOT NULL DEFAULT '',
  settings_json TEXT NOT NULL DEFAULT '',
  device_json   TEXT NOT NULL DEFAULT '',
  host          TEXT NOT NULL DEFAULT '',
  started_at    TEXT NOT NULL DEFAULT '',
  finished_at   TEXT
);
CREATE TABLE results (
  id           INTEGER PRIMARY KEY,
  sweep_id     INTEGER REFERENCES sweeps (id),
  device_id    INTEGER NOT NULL REFERENCES devices (id),
  template_id  INTEGER NOT NULL REFERENCES templates (id),
  problem_id   INTEGER NOT NULL REFERENCES problems (id),
  config       TEXT NOT NULL,
  status       TEXT NOT NULL,
  reason       TEXT NOT NULL DEFAULT '',
  median_ms    REAL,
  p20_ms       REAL,
  p80_ms       REAL,
  min_ms       REAL,
  max_ms       REAL,
  count        INTEGER NOT NULL DEFAULT 0,
  samples_json TEXT NOT NULL DEFAULT '',
  error_norm   REAL,
  error_ratio  REAL,
  compile_ms   REAL,
  created_at   TEXT NOT NULL,
  UNIQUE (device_id, template_id, problem_id, config)
);
CREATE INDEX results_by_sweep ON results (sweep_id);
CREATE INDEX results_by_template ON results (template_id);
CREATE INDEX results_by_problem ON results (problem_id);
CREATE TABLE winners (
  device_id   INTEGER NOT NULL REFERENCES devices (id),
  problem_id  INTEGER NOT NULL REFERENCES problems (id),
  template_id INTEGER NOT NULL REFERENCES templates (id),
  result_id   INTEGER NOT NULL REFERENCES results (id),
  config      TEXT NOT NULL,
  median_ms   REAL NOT NULL,
  updated_at  TEXT NOT NULL,
  PRIMARY KEY (device_id, problem_id, template_id)
);
CREATE INDEX winners_by_problem ON winners (problem_id);
PRAGMA user_version = 1;
)sql";

// Version 2: resource usage and the compiler log of every candidate.
constexpr const char* kV2 = R"sql(
ALTER TABLE results ADD COLUMN resources_json TEXT NOT NULL DEFAULT '';
ALTER TABLE results ADD COLUMN compile_log TEXT NOT NULL DEFAULT '';
PRAGMA user_version = 2;
)sql";

// Version 3: device keys hash only what stays the same on one machine (a
// CPU's global memory, the host's current memory, no longer:
// HardwareIdentity::key). Devices whose new keys agree were one device: they
// become the earliest of them, a configuration measured under several keeps
// its earliest result (as add_result keeps a stored one), and their winners
// are recomputed. Sweeps' device_json and devices' info_json carry the new
// key. kforge_device_key_v3 and kforge_declared: sql_functions.hpp.
constexpr const char* kV3 = R"sql(
CREATE TEMP TABLE kf_rekey AS
  SELECT id, kforge_device_key_v3(info_json, key) AS new_key FROM devices;
CREATE TEMP TABLE kf_device_map AS
  SELECT r.id AS old_id, r.new_key,
         (SELECT min(o.id) FROM kf_rekey o WHERE o.new_key = r.new_key) AS new_id
  FROM kf_rekey r;
CREATE TEMP TABLE kf_merged AS
  SELECT old_id FROM kf_device_map
  WHERE new_id IN (SELECT new_id FROM kf_device_map WHERE old_id <> new_id);
DELETE FROM winners WHERE device_id IN (SELECT old_id FROM kf_merged);
DELETE FROM results WHERE device_id IN (SELECT old_id FROM kf_merged) AND EXISTS (
  SELECT 1 FROM kf_device_map m JOIN kf_device_map mo ON mo.new_id = m.new_id
    JOIN results o ON o.device_id = mo.old_id
  WHERE m.old_id = results.device_id AND o.template_id = results.template_id
    AND o.problem_id = results.problem_id AND o.config = results.config AND o.id < results.id);
UPDATE results SET device_id = (SELECT new_id FROM kf_device_map WHERE old_id = results.device_id)
  WHERE device_id IN (SELECT old_id FROM kf_device_map WHERE old_id <> new_id);
DELETE FROM devices WHERE id IN (SELECT old_id FROM kf_device_map WHERE old_id <> new_id);
UPDATE devices SET
  key = (SELECT new_key FROM kf_device_map WHERE old_id = devices.id),
  info_json = CASE WHEN json_valid(info_json) AND json_type(info_json, '$.hardware_key') = 'text'
    THEN json_set(info_json, '$.hardware_key', (SELECT new_key FROM kf_device_map WHERE old_id = devices.id))
    ELSE info_json END
  WHERE key <> (SELECT new_key FROM kf_device_map WHERE old_id = devices.id);
UPDATE sweeps SET device_json = json_set(device_json, '$.hardware_key',
    kforge_device_key_v3(device_json, json_extract(device_json, '$.hardware_key')))
  WHERE json_valid(device_json) AND json_type(device_json, '$.hardware_key') = 'text';
INSERT INTO winners (device_id, problem_id, template_id, result_id, config, median_ms, updated_at)
SELECT device_id, problem_id, template_id, id, config, median_ms, strftime('%Y-%m-%dT%H:%M:%SZ', 'now') FROM (
  SELECT r.id, r.device_id, r.problem_id, r.template_id, r.config, r.median_ms, row_number() OVER (
    PARTITION BY r.device_id, r.problem_id, r.template_id ORDER BY r.median_ms, r.id) AS rank
  FROM results r JOIN templates t ON t.id = r.template_id
  WHERE r.status = 'ok' AND r.median_ms IS NOT NULL AND kforge_declared(t.manifest_json, r.config)
    AND r.device_id IN (SELECT old_id FROM kf_merged))
WHERE rank = 1;
DROP TABLE temp.kf_rekey;
DROP TABLE temp.kf_device_map;
DROP TABLE temp.kf_merged;
PRAGMA user_version = 3;
)sql";

// Version 4: hardware counters beside each result (docs/profiling.md). One
// row per counter a collector read for a result, or one `availability` row
// with source 'unavailable' saying why a collector read nothing; stored
// timings are never touched. counters_version is kCountersVersion
// (records.hpp) when the row was written.
constexpr const char* kV4 = R"sql(
CREATE TABLE counters (
  id               INTEGER PRIMARY KEY,
  result_id        INTEGER NOT NULL REFERENCES results (id),
  source           TEXT NOT NULL,
  collector        TEXT NOT NULL,
  name             TEXT NOT NULL,
  value            REAL,
  unit             TEXT NOT NULL DEFAULT '',
  note             TEXT NOT NULL DEFAULT '',
  tool             TEXT NOT NULL DEFAULT '',
  counters_version INTEGER NOT NULL,
  created_at       TEXT NOT NULL,
  UNIQUE (result_id, collector, name)
);
PRAGMA user_version = 4;
)sql";

// Version 5: peaks kforge measured on each device with its own kernels (copy
// bandwidth, FP32 FMA throughput), one row per device and ceiling name, so
// verdicts can say "at 0.88 of the measured copy bandwidth".
constexpr const char* kV5 = R"sql(
CREATE TABLE device_ceilings (
  id           INTEGER PRIMARY KEY,
  device_id    INTEGER NOT NULL REFERENCES devices (id),
  name         TEXT NOT NULL,
  value        REAL NOT NULL,
  unit         TEXT NOT NULL,
  method       TEXT NOT NULL DEFAULT '',
  tool_version TEXT NOT NULL DEFAULT '',
  created_at   TEXT NOT NULL,
  UNIQUE (device_id, name)
);
PRAGMA user_version = 5;
)sql";

constexpr Migration kMigrations[] = {
    {1, "initial tables", kV1},
    {2, "results.resources_json, results.compile_log", kV2},
    {3, "device keys without a CPU's global memory; devices merged", kV3},
    {4, "counters table: hardware counters and their availability per result", kV4},
    {5, "device_ceilings table: peaks kforge measured per device", kV5},
};
static_assert(std::size(kMigrations) == kSchemaVersion,
              "every schema version needs exactly one migration");

}  // namespace

std::span<const Migration> migrations() { return kMigrations; }

}  // namespace kforge::schema
