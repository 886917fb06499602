// Reader: opens a trace, verifies it, and decodes chunks on demand.
//
// open() reads the header, the footer's chunk index, every metadata block
// and the stack table. Event chunks are decoded only when asked for, and only
// the requested columns are decompressed. readChunk() is const and
// thread-safe (pread), so callers decode chunks in parallel.
//
// A file whose trailer or footer is missing or damaged (a killed recorder, a
// truncated copy) is recovered by scanning: every block whose header and
// checksum verify is kept, and recovery() says what was salvaged and where
// the damage starts. Every length and count read from disk is bounded by the
// bytes actually present.
//
// What it hands out has headers of its own: chunks and their columns
// (chunk.h), the stack table (stack_table.h), the recovery report
// (recovery_report.h).
//
//   auto reader = format::Reader::open("in.trace");
//   if (!reader) die(reader.error().message());
//   for (const auto& ref : (*reader)->chunks(EventKind::kCpuSample, window)) {
//     auto chunk = (*reader)->readChunk(ref, {CpuSampleColumn::time, CpuSampleColumn::stack_id});
//     ...
//   }
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "format/chunk.h"
#include "format/event_kinds.h"
#include "format/file_layout.h"
#include "format/metadata.h"
#include "format/recovery_report.h"
#include "format/stack_table.h"

namespace incise::format {

// Per-column sizes, for `incise info`.
struct ColumnSize {
  uint16_t id = 0;
  Encoding encoding{};
  Compression compression{};
  uint64_t raw_bytes = 0;
  uint64_t stored_bytes = 0;
};

struct ReaderOptions {
  // Cap'n Proto limits for messages read from disk.
  uint64_t traversal_limit_words = 64u << 20;
  int nesting_limit = 16;
};

// Counters the tests and `incise info` read; updated by readChunk.
struct ReaderStats {
  std::atomic<uint64_t> chunks_read{0};
  std::atomic<uint64_t> columns_decompressed{0};
  std::atomic<uint64_t> bytes_read{0};
};

class Reader {
 public:
  static Result<std::unique_ptr<Reader>> open(const std::string& path,
                                              const ReaderOptions& options = {});
  virtual ~Reader() = default;

  virtual const Header& header() const = 0;
  virtual const Metadata& metadata() const = 0;
  virtual const StackTable& stacks() const = 0;
  virtual const RecoveryReport& recovery() const = 0;
  // End of recording from the footer; after a salvage, the last event time seen.
  virtual uint64_t endTime() const = 0;

  // Every block in file order (event chunks, stack chunks, metadata, ...).
  virtual const std::vector<ChunkRef>& blocks() const = 0;
  // Event chunks of one kind that overlap `window`, in file order.
  virtual std::vector<ChunkRef> chunks(EventKind kind, TimeWindow window = {}) const = 0;
  virtual uint64_t rows(EventKind kind) const = 0;

  virtual Result<Chunk> readChunk(const ChunkRef& ref, ColumnSet columns) const = 0;
  virtual Result<std::vector<ColumnSize>> columnSizes(const ChunkRef& ref) const = 0;

  virtual const ReaderStats& stats() const = 0;
};

}  // namespace incise::format
