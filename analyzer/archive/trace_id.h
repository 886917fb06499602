// The id of a trace in an archive, a directory or ClickHouse: the hex XXH3-64
// of the file's bytes, so the same file gets the same id on every host and a
// second add or push of it is recognised.
//
//   TraceIdHasher hasher;
//   hasher.update(bytes.data(), bytes.size());   // as the file is read or copied
//   std::string id = hasher.hex();               // "9f2c4e0b1a7d3c55"
//   Result<std::string> same = traceIdOfFile("app.trace");
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "base/status.h"

namespace incise::analyzer {

class TraceIdHasher {
 public:
  TraceIdHasher();
  ~TraceIdHasher();
  TraceIdHasher(const TraceIdHasher&) = delete;
  TraceIdHasher& operator=(const TraceIdHasher&) = delete;

  void update(const void* data, size_t size);
  // 16 lowercase hex digits of the bytes so far.
  std::string hex() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Reads the whole file.
Result<std::string> traceIdOfFile(const std::string& path);

}  // namespace incise::analyzer
