// Names for what latency rows timed, from the trace's metadata (format 2.3
// latency probes): "parse_request", "nanosleep", "loop0 read", "READV".
// Numbers the trace does not name fall back to "syscall 35", "device 7:0",
// "io_uring op 1", "function 3".
//
//   LatencyNames names(trace.reader().metadata());
//   names.name(row.source, row.probe, row.detail);   // "loop0 read"
//   names.object(row.source, row.probe);             // "/srv/app" for functions
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "format/metadata.h"

namespace incise::analyzer {

class LatencyNames {
 public:
  explicit LatencyNames(const format::Metadata& metadata);
  std::string name(uint64_t source, uint64_t probe, uint64_t detail) const;
  // The binary of a traced function ("[kernel]" for a kernel one); "" otherwise.
  std::string object(uint64_t source, uint64_t probe) const;

 private:
  std::map<std::pair<uint64_t, uint64_t>, format::LatencyProbe> probes_;
};

}  // namespace incise::analyzer
