// Errors as values (KJ/Abseil style): a failure carries a code a caller can
// branch on and a message a person can read.
//
// Anything read from disk, a command line or a server can be wrong, so those
// paths return Result<T> or Status instead of throwing; asserts are kept for
// our own bugs.
//
//   Result<Chunk> chunk = reader.readChunk(ref, columns);
//   if (!chunk) return chunk.error();   // "offset 4096: column 3: varint runs past end"
//   use(*chunk);
//
//   INCISE_ASSIGN_OR_RETURN(Chunk chunk, reader.readChunk(ref, columns));
//   INCISE_RETURN_IF_ERROR(writer.finish());
//   if (version.error().code() == ErrorCode::kNotFound) ...   // never match message text
#pragma once

#include <cassert>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace incise {

// What kind of failure an Error is: few, coarse, and stable, so callers decide
// on a code, never on the words of a message.
enum class ErrorCode : uint8_t {
  kUnknown,           // no more specific code applies
  kInvalidArgument,   // the caller's input: a command line, an option value, a name
  kNotFound,          // a file, object, table or database that does not exist
  kPermissionDenied,  // the system refused (EACCES, EPERM, a missing capability)
  kDataLoss,          // bytes that are not what they claim: a damaged or foreign file
  kUnsupported,       // a kernel, file version or feature this build cannot use
  kUnavailable,       // a service that did not answer (a server, a socket)
  kIo,                // a read or write that failed (a full disk, EIO)
};

// "not found", "data loss", ... for messages and JSON.
std::string_view errorCodeName(ErrorCode code);

// The code an errno value means: ENOENT is kNotFound, EACCES kPermissionDenied, ...
ErrorCode errorCodeFromErrno(int errno_value);

class Error {
 public:
  explicit Error(std::string message) : message_(std::move(message)) {}
  Error(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}
  // "WHAT: strerror(errno_value)" with the code that errno means.
  static Error fromErrno(int errno_value, const std::string& what);

  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // Prefixes context, outermost last: Error("bad varint").context("column 3").
  // The code stays.
  Error context(const std::string& where) const { return Error(code_, where + ": " + message_); }

 private:
  ErrorCode code_ = ErrorCode::kUnknown;
  std::string message_;
};

// Success or an Error; [[nodiscard]] so a failed write is never ignored.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)) {}  // NOLINT: implicit on purpose
  static Status ok() { return Status(); }
  bool isOk() const { return !error_.has_value(); }
  explicit operator bool() const { return isOk(); }
  const Error& error() const {
    assert(error_);
    return *error_;
  }
  std::string message() const { return error_ ? error_->message() : "ok"; }

 private:
  std::optional<Error> error_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}      // NOLINT
  Result(Error error) : value_(std::move(error)) {}  // NOLINT
  bool isOk() const { return std::holds_alternative<T>(value_); }
  explicit operator bool() const { return isOk(); }
  T& operator*() { return std::get<T>(value_); }
  const T& operator*() const { return std::get<T>(value_); }
  T* operator->() { return &std::get<T>(value_); }
  const T* operator->() const { return &std::get<T>(value_); }
  const Error& error() const { return std::get<Error>(value_); }
  Status status() const { return isOk() ? Status() : Status(error()); }
  T take() { return std::move(std::get<T>(value_)); }

 private:
  std::variant<T, Error> value_;
};

// The Status of either, for INCISE_RETURN_IF_ERROR.
inline Status statusOf(Status status) {
  return status;
}
template <typename T>
Status statusOf(const Result<T>& result) {
  return result.status();
}

}  // namespace incise

// Returns the error of a Status or a Result (whose value is not needed) from
// the enclosing function, which returns Status or any Result<U>.
#define INCISE_RETURN_IF_ERROR(expr)                            \
  do {                                                          \
    ::incise::Status incise_status_ = ::incise::statusOf(expr); \
    if (!incise_status_) return incise_status_.error();         \
  } while (0)

// Declares (or assigns) LHS from a Result's value, or returns its error from
// the enclosing function: INCISE_ASSIGN_OR_RETURN(Chunk chunk, readChunk(ref));
// A statement, not an expression; at most one per line.
#define INCISE_ASSIGN_OR_RETURN(lhs, ...) \
  INCISE_ASSIGN_OR_RETURN_IMPL_(INCISE_STATUS_CONCAT_(incise_result_, __LINE__), lhs, __VA_ARGS__)
#define INCISE_ASSIGN_OR_RETURN_IMPL_(result, lhs, ...) \
  auto result = (__VA_ARGS__);                          \
  if (!result) return result.error();                   \
  lhs = result.take()
#define INCISE_STATUS_CONCAT_(a, b) INCISE_STATUS_CONCAT_INNER_(a, b)
#define INCISE_STATUS_CONCAT_INNER_(a, b) a##b
