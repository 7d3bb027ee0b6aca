// One database a lookup searches (internal to the lookup): the user's, then
// the system's. Used only under the lookup's select mutex (a Database must
// not be used from two threads at once).
#pragma once

#include <memory>
#include <string>

#include "database.hpp"

namespace kforge {

struct LookupSource {
  std::string path;
  std::string role;  ///< "user" or "system"
  std::unique_ptr<Database> db;  ///< null when the file does not exist
  std::string note;  ///< why there is no db
};

}  // namespace kforge
