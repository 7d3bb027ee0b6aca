// The JSON interchange format of tuning data: what `kforge export --format
// json` writes and `kforge import` reads. The format is docs/export.md.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "db/tuning_set.hpp"

namespace kforge {

/// Version of the interchange format, separate from the tool's and the
/// database's. Bump it when a field is added, removed or changes meaning, and
/// update docs/export.md and the golden files tests/data/golden/export_*.json.
/// Readers refuse a newer version.
/// Version 2 added each result's `counters`; version 1 documents are still read.
inline constexpr int kInterchangeSchemaVersion = 2;

/// The document for `set`. `exported_by` names the writer ("kforge 0.1.0
/// (abc1234)"); the source is recorded by file name only, so exports of
/// the same data from different directories are identical. Columns that
/// hold JSON text (device info, manifests, sweep settings and fingerprints,
/// samples, resources) are embedded as JSON when they hold an object or an
/// array, and as the original string otherwise, so a round trip keeps them.
/// Keys keep the order docs/export.md lists them in.
nlohmann::ordered_json to_interchange_json(const TuningSet& set, const std::string& exported_by);

/// Parses and checks a document. Every error is one line naming `path`, the
/// field ("results[3].median_ms") and what is wrong with its value. The set's
/// source is `path`, its source_schema_version the document's schema_version,
/// and its filter the one recorded in the document.
Result<TuningSet> parse_interchange_json(std::string_view text, const std::string& path);

}  // namespace kforge
