// Sample records and raw-SQLite helpers shared by the database tests.
#pragma once

#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "db/database.hpp"

namespace kforge::test {

inline DeviceRecord sample_device(const std::string& key = "dev-a") {
  DeviceRecord d;
  d.key = key;
  d.backend = "opencl";
  d.vendor = "NVIDIA Corporation";
  d.name = "NVIDIA H200 " + key;
  d.arch = "sm_90";
  d.info_json = R"({"compute_units":132,"key":")" + key + R"("})";
  return d;
}

inline TemplateRecord sample_template(const std::string& name = "gemm_simt",
                                      const std::string& hash = "hash-1",
                                      const std::string& op = "gemm") {
  TemplateRecord t;
  t.name = name;
  t.op = op;
  t.hash = hash;
  t.manifest_json = R"({"name":")" + name + R"(","params":{"BM":[32,64]}})";
  return t;
}

inline ProblemRecord sample_problem(const std::string& key = "gemm_f32_nn_256x256x256",
                                    const std::string& op = "gemm",
                                    const std::string& dtype = "f32",
                                    const std::string& layout = "nn") {
  ProblemRecord p;
  p.key = key;
  p.op = op;
  p.dims_json = R"({"K":256,"M":256,"N":256,"batch":1})";
  p.dtype = dtype;
  p.layout = layout;
  return p;
}

struct Ids {
  std::int64_t sweep = 0, device = 0, tmpl = 0, problem = 0;
};

/// Stores one device, template, problem and sweep and returns their ids.
inline Ids seed(Database& db, const std::string& device_key = "dev-a",
                const std::string& template_hash = "hash-1") {
  Ids ids;
  ids.device = db.put_device(sample_device(device_key)).value();
  ids.tmpl = db.put_template(sample_template("gemm_simt", template_hash)).value();
  ids.problem = db.put_problem(sample_problem()).value();
  SweepRecord s;
  s.tool_version = "0.1.0";
  s.started_at = "2024-05-01T12:00:00Z";
  ids.sweep = db.begin_sweep(s).value();
  return ids;
}

inline ResultRecord make_result(const Ids& ids, const std::string& config,
                                const std::string& status = "ok", double median = 1.0) {
  ResultRecord r;
  r.sweep_id = ids.sweep;
  r.device_id = ids.device;
  r.template_id = ids.tmpl;
  r.problem_id = ids.problem;
  r.config = config;
  r.status = status;
  r.reason = status == "ok" ? "" : "failed: " + status;
  r.median_ms = median;
  r.p20_ms = median * 0.9;
  r.p80_ms = median * 1.1;
  r.min_ms = median * 0.8;
  r.max_ms = median * 1.3;
  r.count = 10;
  r.samples_json = "[1.0,1.1]";
  return r;
}

/// Runs SQL on a raw connection, bypassing kforge (to forge old or foreign files).
inline void raw_exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                          nullptr) == SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  const std::string msg = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  INFO(msg);
  REQUIRE(rc == SQLITE_OK);
}

/// The first column of the first row of `sql`, as text, read on a raw connection.
inline std::string raw_text(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  std::string out;
  int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr);
  if (rc == SQLITE_OK) rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    out = p ? p : "";
  }
  const std::string msg = sqlite3_errmsg(db);
  sqlite3_finalize(st);
  sqlite3_close(db);
  INFO(msg);
  REQUIRE(rc == SQLITE_ROW);
  return out;
}

}  // namespace kforge::test
