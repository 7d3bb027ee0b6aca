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
CREATE TABLE problems (
  id        INTEGER PRIMARY KEY,
  key       TEXT NOT NULL UNIQUE,
  op        TEXT NOT NULL DEFAULT '',
  dims_json TEXT NOT NULL DEFAULT '',
  dtype     TEXT NOT NULL DEFAULT '',
  layout    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX problems_by_op ON problems (op, dtype, layout);
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
  created_at   TEXT NOT NULL, resources_json TEXT NOT NULL DEFAULT '', compile_log TEXT NOT NULL DEFAULT '',
  UNIQUE (device_id, template_id, problem_id, config)
);
CREATE INDEX results_by_problem ON results (problem_id);
CREATE INDEX results_by_sweep ON results (sweep_id);
CREATE INDEX results_by_template ON results (template_id);
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
CREATE TABLE templates (
  id            INTEGER PRIMARY KEY,
  name          TEXT NOT NULL,
  op            TEXT NOT NULL DEFAULT '',
  hash          TEXT NOT NULL,
  manifest_json TEXT NOT NULL DEFAULT '',
  created_at    TEXT NOT NULL,
  UNIQUE (name, hash)
);
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
