// TraceFacts: what a trace says about where and how it was recorded — host,
// kernel, command, start, duration, sample rate, and the build-ids of the
// objects its samples touched (and which of them had none). `incise diff` uses them to judge
// whether two traces are comparable; `incise archive` indexes them.
//
// Read from the header and metadata alone: no event chunk is decoded, except
// that the sample count comes from the chunk index.
//
//   auto reader = format::Reader::open("app.trace");
//   TraceFacts facts = traceFactsOf(**reader);
//   facts.build_ids["/usr/bin/app"] == "1a2b3c...";   // hex
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analyzer/render/table.h"  // utcText
#include "base/hex.h"
#include "format/reader.h"

namespace incise::analyzer {

struct TraceFacts {
  std::string host;
  std::string kernel;
  std::vector<std::string> command;  // argv of the recorded command; empty for system-wide
  uint64_t start_wall_ns = 0;        // wall clock at the start, ns since the epoch
  uint64_t duration_ns = 0;
  uint32_t sample_hz = 0;                        // requested sampling frequency; 0 = not sampling
  uint64_t samples = 0;                          // cpu-sample rows in the file
  uint64_t allocation_samples = 0;               // alloc rows (--alloc) in the file
  uint64_t alloc_sample_bytes = 0;               // --alloc's mean bytes between samples; 0: unsaid
  std::map<std::string, std::string> build_ids;  // object path -> build-id in hex
  std::set<std::string> unidentified_objects;    // object paths recorded without a build-id

  // Samples per second of trace (0 for an empty trace).
  double sampleRate() const;
};

TraceFacts traceFactsOf(const format::Reader& reader);

// argv joined by spaces; "(system-wide)" when empty.
std::string commandText(const std::vector<std::string>& command);
// "2024-05-01 12:34:56Z" for ns since the epoch.
std::string utcTimeText(uint64_t wall_ns);

}  // namespace incise::analyzer
