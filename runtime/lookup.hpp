// The runtime lookup: select(problem) walks a fallback chain over the tuning
// database, then compiles the chosen kernel once and launches it.
//
// Chain, in order (each step is recorded in Selection::explanation):
//   exact    a winner tuned on this device for this very problem
//   nearest  the winner of the closest tuned problem on this device (same
//            operator, dtype and layout); distance = sum over dims of
//            |log2(a) - log2(b)|, ties broken by the faster winner
//   default  the default configuration of the first template that supports
//            the problem, built-in templates before user ones, then by name
// An entry is skipped, with a note, when its template is unknown, its hash
// differs from the template's current hash (stale), a parameter value is not
// declared by the template (a database is input, not code), or the
// configuration is not valid for this problem and device (envelope,
// constraints).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend.hpp"
#include "database.hpp"
#include "problem.hpp"
#include "template_catalog.hpp"

namespace kforge {

struct Selection {
  std::string rule;  ///< "exact", "nearest" or "default"
  std::string template_name;
  std::string template_hash;
  std::string config;
  Problem problem;            ///< the problem selected for (normalized)
  std::string tuned_problem;  ///< key of the problem the entry was tuned on (exact, nearest)
  double tuned_median_ms = 0;
  double distance = 0;        ///< nearest: log2 distance to the tuned problem
  std::string explanation;    ///< every step tried, one per line
};

class Lookup {
 public:
  /// Opens `db_path` read-only. A missing file is not an error: only the
  /// default rule can then fire, and explain says why. A corrupt file or one
  /// from another schema version is an error.
  static Result<std::unique_ptr<Lookup>> open(const std::string& db_path, Device& device,
                                              TemplateCatalog catalog);

  /// Selects a kernel for `problem`; cached per problem, safe from many threads.
  Result<Selection> select(const Problem& problem);

  /// Compiles the selection once (in-memory cache) and launches it with the
  /// operator's argument list. Returns the kernel's device time in ms.
  Result<double> launch(const Selection& selection, const std::vector<KernelArg>& args);

 private:
  Lookup(std::unique_ptr<Database> db, std::string db_note, Device& device, TemplateCatalog catalog)
      : db_(std::move(db)), db_note_(std::move(db_note)), device_(device), catalog_(std::move(catalog)) {}
  Result<Selection> select_uncached(const Problem& problem);

  struct Loaded {
    std::unique_ptr<Kernel> kernel;
    LaunchGeometry geometry;
  };
  std::unique_ptr<Database> db_;
  std::string db_note_;
  Device& device_;
  TemplateCatalog catalog_;
  std::mutex mutex_;
  std::map<std::string, Selection> selections_;  ///< by problem key
  std::map<std::string, Loaded> kernels_;        ///< by template/config/problem key
};

}  // namespace kforge
