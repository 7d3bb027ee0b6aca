-- A tuning database as schema version 3 wrote it (sqlite3 .dump, with its
-- user_version): the starting point of the version 4 migration test.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
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
INSERT INTO devices VALUES(1,'opencl-cpu-fixture','opencl','GenuineIntel','cpu-haswell-Intel(R) Xeon(R) CPU','x86_64-haswell','{"backend":"opencl","compute_units":2,"hardware_key":"opencl-cpu-fixture"}','2026-11-30T10:00:00Z');
CREATE TABLE problems (
  id        INTEGER PRIMARY KEY,
  key       TEXT NOT NULL UNIQUE,
  op        TEXT NOT NULL DEFAULT '',
  dims_json TEXT NOT NULL DEFAULT '',
  dtype     TEXT NOT NULL DEFAULT '',
  layout    TEXT NOT NULL DEFAULT ''
);
INSERT INTO problems VALUES(1,'gemm/K=64,M=64,N=64,batch=1/f32/NN','gemm','{"K":64,"M":64,"N":64,"batch":1}','f32','NN');
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
INSERT INTO results VALUES(1,1,1,1,1,'BM32','ok','',0.25,0.23999999999999999111,0.27000000000000001776,0.23000000000000000999,0.29999999999999998889,12,'[0.25,0.24,0.27]',9.9999999999999995472e-08,0.010000000000000000208,120.0,'2026-11-30T10:00:30Z','{"registers":0}','');
INSERT INTO results VALUES(2,1,1,1,1,'BM64','ok','',0.2000000000000000111,0.19000000000000000222,0.22000000000000000111,0.17999999999999999333,0.25,12,'[0.2,0.19,0.22]',1.9999999999999999094e-07,0.020000000000000000416,130.0,'2026-11-30T10:00:40Z','{"registers":0}','');
INSERT INTO results VALUES(3,1,1,1,1,'BM128','compile_error','BM128: not declared',NULL,NULL,NULL,NULL,NULL,0,'',NULL,NULL,5.0,'2026-11-30T10:00:50Z','','error: too large');
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
INSERT INTO sweeps VALUES(1,'0.4.0','abc1234','kforge tune --op gemm --dims M=64,N=64,K=64','{"strategy":"exhaustive"}','{"hardware_key":"opencl-cpu-fixture"}','fixture-host','2026-11-30T10:00:00Z','2026-11-30T10:01:00Z');
CREATE TABLE templates (
  id            INTEGER PRIMARY KEY,
  name          TEXT NOT NULL,
  op            TEXT NOT NULL DEFAULT '',
  hash          TEXT NOT NULL,
  manifest_json TEXT NOT NULL DEFAULT '',
  created_at    TEXT NOT NULL,
  UNIQUE (name, hash)
);
INSERT INTO templates VALUES(1,'gemm_simt','gemm','hash-v3','{"name":"gemm_simt","params":{"BM":[32,64]}}','2026-11-30T10:00:00Z');
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
INSERT INTO winners VALUES(1,1,1,2,'BM64',0.2000000000000000111,'2026-11-30T10:01:00Z');
CREATE INDEX problems_by_op ON problems (op, dtype, layout);
CREATE INDEX results_by_problem ON results (problem_id);
CREATE INDEX results_by_sweep ON results (sweep_id);
CREATE INDEX results_by_template ON results (template_id);
CREATE INDEX winners_by_problem ON winners (problem_id);
COMMIT;
PRAGMA user_version = 3;
