// Fallible values for every kforge library: a Result holds a value or an Error.
// Exceptions are used only at the CLI edge (tools/).
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace kforge {

/// Broad classes of failure; the CLI maps kBadInput to exit code 2.
enum class ErrorCode {
  kBadInput,     ///< a file, flag or value supplied by the user is wrong
  kNotFound,     ///< a named thing (device, template, config) does not exist
  kCompile,      ///< a kernel failed to compile
  kResource,     ///< a configuration exceeds a device limit
  kLaunch,       ///< a launch or device call failed
  kDatabase,     ///< SQLite reported an error
  kUnsupported,  ///< the request is valid but not supported here
  kInternal,
};

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;  ///< one line, names the file/field/value at fault
  std::string context;  ///< optional detail: compile log, options, source hash

  static Error bad_input(std::string m) { return {ErrorCode::kBadInput, std::move(m), {}}; }
  static Error not_found(std::string m) { return {ErrorCode::kNotFound, std::move(m), {}}; }
  static Error internal(std::string m) { return {ErrorCode::kInternal, std::move(m), {}}; }
};

/// Thrown only by Result::value() on misuse and at the CLI edge.
class ErrorException : public std::runtime_error {
 public:
  explicit ErrorException(Error e) : std::runtime_error(e.message), error_(std::move(e)) {}
  const Error& error() const { return error_; }

 private:
  Error error_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { check(); return std::get<0>(v_); }
  const T& value() const& { check(); return std::get<0>(v_); }
  T&& value() && { check(); return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  void check() const {
    if (!ok()) throw ErrorException(std::get<1>(v_));
  }
  std::variant<T, Error> v_;
};

/// Result of an operation that yields nothing.
struct Ok {};
using Status = Result<Ok>;
inline Status ok_status() { return Ok{}; }

}  // namespace kforge

/// Propagate an error from an expression yielding a Result; binds the value to `var`.
#define KF_TRY_ASSIGN(var, expr)                         \
  auto var##_result_ = (expr);                           \
  if (!var##_result_.ok()) return var##_result_.error(); \
  auto var = std::move(var##_result_).value()

/// Propagate an error from an expression yielding a Status.
#define KF_TRY(expr)                                 \
  do {                                               \
    auto kf_status_ = (expr);                        \
    if (!kf_status_.ok()) return kf_status_.error(); \
  } while (0)
