// Writer: streams events into a trace file.
//
// Rows are appended to one chunk builder per event kind; a full builder is
// sealed and handed to a background thread that encodes and compresses each
// column and appends the block, so the caller (the recorder's ring-buffer
// drain) never waits on zstd or the disk unless that thread falls a bounded
// queue behind. The small chunks that frequent flushes leave are merged into
// one per kind later on that thread (format/region_merge.h). Memory is bounded by rows_per_chunk x
// kinds x queue depth plus the stack-intern table, which is reset (new ids) when it grows past
// max_interned_stacks.
//
//   auto writer = format::Writer::create("out.trace", header, {});
//   if (!writer) die(writer.error().message());
//   uint64_t stack = (*writer)->internStack(frames);
//   (*writer)->append(format::CpuSample{.time = t, .cpu = 0, .pid = p, .tid = p,
//                                        .stack_id = stack, .weight = 10101010});
//   (*writer)->flush();   // at least once a second in the recorder
//   Status done = (*writer)->close();
//
// Errors (ENOSPC, EIO) are sticky: append keeps accepting rows and drops
// them, flush()/close()/status() report the first error.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "base/status.h"
#include "format/event_kinds.h"
#include "format/metadata.h"

namespace incise::format {

struct WriterOptions {
  uint32_t rows_per_chunk = 65536;
  int zstd_level = 3;
  uint32_t max_interned_stacks = 1u << 20;
  uint32_t queue_depth = 4;  // sealed chunks waiting for the background thread
  // A chunk with byte-blob columns (stack copies) is sealed once its blobs
  // reach this size, whatever its row count: bounds memory and column size.
  uint32_t max_chunk_blob_bytes = 8u << 20;
  bool background = true;  // false: encode and write on the caller's thread
  // Rewrite the small chunks that flushes leave with one chunk per kind, now
  // and then and at close (format/region_merge.h). Only for a regular file.
  bool merge_small_chunks = true;
};

struct WriterStats {
  uint64_t rows[kAllEventKinds.size() + 1] = {};  // indexed by EventKind id
  uint64_t stacks = 0;                            // distinct stacks written
  uint64_t frames = 0;                            // frames in those stacks
  uint64_t blocks = 0;
  uint64_t bytes_written = 0;        // file size so far
  uint64_t raw_column_bytes = 0;     // encoded, before compression
  uint64_t stored_column_bytes = 0;  // after compression
  uint64_t region_merges = 0;        // regions of small chunks rewritten merged
};

struct InternedStack {
  uint64_t id = 0;
  bool is_new = false;
};

class Writer {
 public:
  // Creates (truncates) `path` with mode 0600 and writes the header block.
  // A symlink at `path` is not followed (the create fails).
  static Result<std::unique_ptr<Writer>> create(const std::string& path, const Header& header,
                                                const WriterOptions& options = {});
  // Writes into `fd`, which it owns from now on (closed by close() or the
  // destructor, also when this fails); `name` is for messages. A regular
  // file is written at its start with pwrite and may have small chunks
  // merged; anything else (a FIFO, a pipe) is written as a stream, in order,
  // without merges.
  static Result<std::unique_ptr<Writer>> create(int fd, const std::string& name,
                                                const Header& header,
                                                const WriterOptions& options = {});
  virtual ~Writer() = default;

#define INCISE_X(enumerator, id, Struct, COLUMNS, doc) virtual void append(const Struct& row) = 0;
  INCISE_EVENT_KINDS(INCISE_X)
#undef INCISE_X
  // A cpu sample with its user stack copy (-g dwarf/hybrid): `row.user_stack`
  // is set to user_stack.size(). The plain append stores an empty copy.
  virtual void append(const CpuSample& row, std::span<const uint8_t> user_stack) = 0;

  // The id of `frames` (leaf first; kernel frames before user frames),
  // assigning a new one the first time, and whether it was new: written to
  // the stack table by this call (also a stack seen again after the table
  // was reset). An empty stack is id 0, never new.
  virtual InternedStack intern(std::span<const uint64_t> frames) = 0;
  uint64_t internStack(std::span<const uint64_t> frames) {
    return intern(frames).id;
  }

  // Queued and written, in order with event chunks, at the next flush.
  virtual void addMetadata(MetadataDelta delta) = 0;

  // Seals every partial chunk and waits until all of it is in the file.
  virtual Status flush() = 0;
  // flush(), then footer and trailer. The writer is unusable afterwards.
  virtual Status close(uint64_t end_mono_ns) = 0;
  virtual Status status() const = 0;
  virtual WriterStats stats() const = 0;
};

}  // namespace incise::format
