// JSON parsing with a depth bound and errors that name the field (bounded_json.hpp).
#include "core/bounded_json.hpp"

#include <vector>

#include "core/printable.hpp"

namespace kforge {

namespace {

/// Where the parser is: one frame per open array or object.
class FieldPath {
 public:
  void open(bool is_array) { frames_.push_back({is_array, 0, {}}); }
  void close() {
    if (!frames_.empty()) frames_.pop_back();
    element_done();
  }
  void key(const std::string& k) {
    if (!frames_.empty()) frames_.back().key = k;
  }
  void element_done() {
    if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
  }

  /// `tasks[0].shape`: the element the parser is in or about to read; past
  /// `max_frames` levels, "..." stands for the rest.
  std::string str(std::size_t max_frames = 8) const {
    std::string out;
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      if (i == max_frames) {
        out += "...";
        break;
      }
      const Frame& f = frames_[i];
      if (f.is_array) {
        out += '[';
        out += std::to_string(f.index);
        out += ']';
      } else if (!f.key.empty()) {
        if (!out.empty()) out += '.';
        out += text_excerpt(f.key, 40);
      }
    }
    return out;
  }

 private:
  struct Frame {
    bool is_array;
    std::size_t index;
    std::string key;
  };
  std::vector<Frame> frames_;
};

/// nlohmann's message without its "[json.exception.parse_error.101] " tag,
/// and a number that does not fit shortened to its first digits.
std::string parser_message(const nlohmann::json::exception& e) {
  std::string what = e.what();
  if (auto pos = what.find("] "); what.rfind("[json.exception", 0) == 0 && pos != std::string::npos) {
    what = what.substr(pos + 2);
  }
  const std::string overflow = "number overflow parsing '";
  if (auto pos = what.find(overflow); pos != std::string::npos) {
    const auto start = pos + overflow.size();
    const auto end = what.find('\'', start);
    const std::string number = what.substr(start, end == std::string::npos ? std::string::npos : end - start);
    return "number " + text_excerpt(number, 16) + " (" + std::to_string(number.size()) +
           " characters) is out of range";
  }
  return printable(what);
}

template <typename Json>
Result<Json> parse_bounded(std::string_view text, const std::string& where,
                           const typename Json::parser_callback_t& also) {
  using Event = typename Json::parse_event_t;
  FieldPath path;
  std::string too_deep;  // the field where nesting passed the bound
  const typename Json::parser_callback_t track = [&](int depth, Event event, Json& parsed) {
    if (event == Event::object_start || event == Event::array_start) {
      if (!too_deep.empty() || depth >= kMaxJsonDepth) {
        if (too_deep.empty()) too_deep = path.str().empty() ? "(top level)" : path.str();
        return false;  // discarded, and everything inside it
      }
      path.open(event == Event::array_start);
    } else if (event == Event::object_end || event == Event::array_end) {
      path.close();
    } else if (event == Event::key) {
      path.key(parsed.is_string() ? parsed.template get<std::string>() : std::string());
    } else if (event == Event::value) {
      path.element_done();
    }
    if (!too_deep.empty()) return false;
    return also ? also(depth, event, parsed) : true;
  };
  Json root;
  try {
    root = Json::parse(text.begin(), text.end(), track);
  } catch (const nlohmann::json::parse_error& e) {
    return Error::bad_input(where + ": JSON syntax error at byte " + std::to_string(e.byte) + ": " +
                            parser_message(e));
  } catch (const nlohmann::json::exception& e) {
    const std::string field = path.str();
    return Error::bad_input(where + ": " + (field.empty() ? "" : field + ": ") + parser_message(e));
  }
  if (!too_deep.empty()) {
    return Error::bad_input(where + ": " + too_deep + ": nested deeper than " + std::to_string(kMaxJsonDepth) +
                            " levels of arrays and objects");
  }
  return root;
}

}  // namespace

Result<nlohmann::json> parse_json_bounded(std::string_view text, const std::string& where,
                                          const nlohmann::json::parser_callback_t& also) {
  return parse_bounded<nlohmann::json>(text, where, also);
}

Result<nlohmann::ordered_json> parse_ordered_json_bounded(std::string_view text, const std::string& where) {
  return parse_bounded<nlohmann::ordered_json>(text, where, nullptr);
}

std::string text_excerpt(std::string_view text, std::size_t max_chars) {
  if (text.size() <= max_chars) return printable(text);
  return printable(text.substr(0, max_chars)) + "...";
}

std::string json_excerpt(const nlohmann::json& j, std::size_t max_chars) {
  return text_excerpt(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), max_chars);
}

}  // namespace kforge
