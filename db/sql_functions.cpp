// kforge_declared and kforge_device_key_v3: C++ rules offered to SQL.
#include "db/sql_functions.hpp"

#include <sqlite3.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "generator/hardware_identity.hpp"
#include "generator/manifest.hpp"

namespace kforge::sql {
namespace {

std::string_view text_arg(sqlite3_value* v) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_value_text(v));
  return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_value_bytes(v))) : std::string_view();
}

/// Parsed manifests by their text: a winner query checks many rows of few
/// template versions, and parsing is the costly part.
class ManifestCache {
 public:
  /// nullptr when the text is not a manifest this kforge parses.
  std::shared_ptr<const TemplateManifest> get(std::string_view text) {
    std::lock_guard lock(mutex_);
    auto it = parsed_.find(text);
    if (it != parsed_.end()) return it->second;
    if (parsed_.size() >= kMaxEntries) parsed_.clear();
    auto m = TemplateManifest::parse(text, "manifest_json");
    std::shared_ptr<const TemplateManifest> p;
    if (m.ok()) p = std::make_shared<const TemplateManifest>(std::move(*m));
    parsed_.emplace(std::string(text), p);
    return p;
  }

 private:
  static constexpr std::size_t kMaxEntries = 64;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const TemplateManifest>, std::less<>> parsed_;
};

void declared(sqlite3_context* ctx, int, sqlite3_value** argv) {
  auto* cache = static_cast<ManifestCache*>(sqlite3_user_data(ctx));
  const auto manifest = cache->get(text_arg(argv[0]));
  sqlite3_result_int(ctx, !manifest || manifest->check_declared_name(text_arg(argv[1])).ok() ? 1 : 0);
}

void device_key_v3(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const std::string_view key = text_arg(argv[1]);
  const auto info = nlohmann::json::parse(text_arg(argv[0]), nullptr, false);
  const auto identity = HardwareIdentity::from_json(info);
  const std::string out = identity && identity->key_before_v3() == key ? identity->key() : std::string(key);
  sqlite3_result_text(ctx, out.data(), static_cast<int>(out.size()), SQLITE_TRANSIENT);
}

Status check(sqlite3* db, const std::string& path, int rc) {
  if (rc == SQLITE_OK) return ok_status();
  return Error{ErrorCode::kDatabase, path + ": cannot register SQL functions: " + sqlite3_errmsg(db), {}};
}

}  // namespace

Status register_functions(sqlite3* db, const std::string& path) {
  constexpr int kFlags = SQLITE_UTF8 | SQLITE_DETERMINISTIC;
  auto* cache = new ManifestCache;
  KF_TRY(check(db, path,
               sqlite3_create_function_v2(db, "kforge_declared", 2, kFlags, cache, declared, nullptr, nullptr,
                                          [](void* p) { delete static_cast<ManifestCache*>(p); })));
  return check(db, path,
               sqlite3_create_function_v2(db, "kforge_device_key_v3", 2, kFlags, nullptr, device_key_v3, nullptr,
                                          nullptr, nullptr));
}

}  // namespace kforge::sql
