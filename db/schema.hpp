// The ordered schema migrations of the tuning database (internal to kforge_db).
#pragma once

#include <span>

namespace kforge::schema {

/// Migration i takes `PRAGMA user_version` i to i + 1. Its script is constant
/// SQL; the last statement sets the new user_version, which the applier checks.
struct Migration {
  int to_version;
  const char* summary;
  const char* sql;
};

/// Every migration, in order; migrations()[i].to_version == i + 1.
std::span<const Migration> migrations();

}  // namespace kforge::schema
