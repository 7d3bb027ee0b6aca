// Copying the exported winners' binaries (export_binaries.hpp).
#include "report/export_binaries.hpp"

#include <algorithm>
#include <filesystem>

#include "core/bounded_json.hpp"
#include "core/printable.hpp"
#include "runtime/kinds/binary_cache.hpp"

namespace kforge::report {

namespace fs = std::filesystem;

namespace {

/// The entry a result names, "" where it names none; a key that is not a
/// digest is refused rather than used as a path (the database is input).
Result<std::string> binary_key_of(const ResultRecord& r) {
  if (r.resources_json.empty()) return std::string();
  auto parsed = parse_json_bounded(r.resources_json, "resources_json");
  if (!parsed.ok() || !parsed->is_object() || !parsed->contains("binary_key")) return std::string();
  const auto& key = (*parsed)["binary_key"];
  if (!key.is_string() || !BinaryCache::is_digest(key.get<std::string>()))
    return Error::bad_input("resources_json: binary_key: not a cache digest: '" + printable(key.dump()) + "'");
  return key.get<std::string>();
}

}  // namespace

Result<BinaryExport> export_binaries(const TuningSet& set, const std::string& cache_dir, const std::string& out_dir) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec || !fs::is_directory(out_dir)) return Error::bad_input("binaries: cannot create '" + printable(out_dir) + "'");
  BinaryExport out;
  for (const WinnerRecord& w : set.winners) {
    const std::string who = w.template_name + " " + w.config + " for " + w.problem_key;
    const ResultRecord* r = set.result(w.result_id);
    auto key = r ? binary_key_of(*r) : Result<std::string>(std::string());
    if (!key.ok()) {
      out.missing.push_back(who + ": " + key.error().message);
      continue;
    }
    if (key->empty()) {
      out.missing.push_back(who + ": its result names no binary (tuned without one, or a library call)");
      continue;
    }
    const fs::path from = fs::path(cache_dir) / BinaryCache::relative_path(*key);
    const fs::path to = fs::path(out_dir) / BinaryCache::relative_path(*key);
    if (!fs::is_regular_file(from, ec)) {
      out.missing.push_back(who + ": not in the binary cache " + cache_dir);
      continue;
    }
    fs::create_directories(to.parent_path(), ec);
    fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
    if (ec) return Error::bad_input("binaries: cannot write '" + printable(to.string()) + "': " + ec.message());
    ++out.copied;
  }
  return out;
}

}  // namespace kforge::report
