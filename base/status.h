// Errors as values at the edges of the format library (KJ/Abseil style).
//
// Anything read from disk can be wrong, so the reader returns Result<T>
// instead of throwing; asserts are kept for our own bugs.
//
//   Result<Chunk> chunk = reader.readChunk(ref, columns);
//   if (!chunk) return chunk.error();   // "offset 4096: column 3: varint runs past end"
//   use(*chunk);
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace incise {

class Error {
 public:
  explicit Error(std::string message) : message_(std::move(message)) {}
  const std::string& message() const { return message_; }
  // Prefixes context, outermost last: Error("bad varint").context("column 3").
  Error context(const std::string& where) const { return Error(where + ": " + message_); }

 private:
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

}  // namespace incise

#define INCISE_RETURN_IF_ERROR(expr)                    \
  do {                                                  \
    ::incise::Status incise_status_ = (expr);           \
    if (!incise_status_) return incise_status_.error(); \
  } while (0)
