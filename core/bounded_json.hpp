// Reading JSON that arrives from outside the process or from a database:
// nesting bounded, every failure an error naming where the text came from.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/result.hpp"

namespace kforge {

/// The deepest nesting of arrays and objects kforge reads. Its own formats
/// nest a few levels; nlohmann's dump, copy and compare recurse once per
/// level, so a value 100,000 levels deep would overflow the stack.
inline constexpr int kMaxJsonDepth = 64;

/// `text` parsed, or Error::bad_input naming `where` (a file, or a table,
/// column and row) and the field at fault for a syntax error, a number out of
/// range (`1e400`) or nesting deeper than kMaxJsonDepth. `also`, when set, sees
/// every parse event as nlohmann's parser callback does (its return value is
/// honoured).
Result<nlohmann::json> parse_json_bounded(std::string_view text, const std::string& where,
                                          const nlohmann::json::parser_callback_t& also = nullptr);
Result<nlohmann::ordered_json> parse_ordered_json_bounded(std::string_view text, const std::string& where);

/// `j` written out for an error message, cut after `max_chars` characters.
std::string json_excerpt(const nlohmann::json& j, std::size_t max_chars = 60);
/// `text` for an error message, cut after `max_chars` characters.
std::string text_excerpt(std::string_view text, std::size_t max_chars = 60);

}  // namespace kforge
