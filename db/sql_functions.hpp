// The SQL functions kforge registers on every connection to a tuning
// database (internal to kforge_db): the winner rule and the version 3
// migration call them.
#pragma once

#include <string>

#include "core/result.hpp"

struct sqlite3;

namespace kforge::sql {

/// Registers on `db`:
///   kforge_declared(manifest_json, config): 0 when the manifest parses and
///     `config` is not one of its declared configurations
///     (TemplateManifest::check_declared_name, the lookup's rule), else 1. A
///     manifest that does not parse cannot be checked here; the lookup still
///     checks against the templates it knows.
///   kforge_device_key_v3(info_json, key): the key HardwareIdentity::key()
///     gives the device of `info_json` when `key` is the one schema versions
///     1 and 2 gave it, else `key` unchanged (a row this kforge cannot
///     reproduce is left as it is).
Status register_functions(sqlite3* db, const std::string& path);

}  // namespace kforge::sql
