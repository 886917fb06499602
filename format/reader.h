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
//   auto reader = format::Reader::open("in.trace");
//   if (!reader) die(reader.error().message());
//   for (const auto& ref : (*reader)->chunks(EventKind::kCpuSample, window)) {
//     auto chunk = (*reader)->readChunk(ref, {CpuSampleColumn::time, CpuSampleColumn::stack_id});
//     ...
//   }
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "format/event_kinds.h"
#include "format/file_layout.h"
#include "format/metadata.h"

namespace incise::format {

struct TimeWindow {
  uint64_t start = 0;
  uint64_t end = UINT64_MAX;  // inclusive
  bool overlaps(uint64_t lo, uint64_t hi) const { return lo <= end && hi >= start; }
};

struct ChunkRef {
  uint64_t offset = 0;  // of the block header
  uint32_t length = 0;  // payload bytes
  BlockType block_type = BlockType::kEventChunk;
  EventKind kind{};
  uint32_t rows = 0;
  uint64_t min_time = 0;
  uint64_t max_time = 0;
};

// Which columns of a kind to decode: a bit per column number.
class ColumnSet {
 public:
  ColumnSet() = default;
  template <typename ColumnEnum>
  ColumnSet(std::initializer_list<ColumnEnum> columns) {  // NOLINT
    for (auto c : columns) bits_ |= uint64_t{1} << static_cast<unsigned>(c);
  }
  static ColumnSet all() {
    ColumnSet s;
    s.bits_ = ~uint64_t{0};
    return s;
  }
  bool has(unsigned column) const { return column < 64 && (bits_ >> column) & 1; }

 private:
  uint64_t bits_ = 0;
};

// The decoded columns of one chunk. Columns not requested, or absent from
// the file (written by an older writer), read as empty spans.
class Chunk {
 public:
  Chunk(EventKind kind, size_t rows) : kind_(kind), rows_(rows) {}
  EventKind kind() const { return kind_; }
  size_t rows() const { return rows_; }
  template <typename ColumnEnum>
  std::span<const uint64_t> column(ColumnEnum c) const {
    return column(static_cast<unsigned>(c));
  }
  std::span<const uint64_t> column(unsigned index) const {
    return index < columns_.size() ? std::span<const uint64_t>(columns_[index])
                                   : std::span<const uint64_t>();
  }
  // Row `i` as a struct; fields of columns not decoded are 0.
  template <typename Row>
  Row row(size_t i) const;

  // The blob of a kBytes column at `row`; empty when the column was not
  // decoded, is absent (an older file) or `row` is out of range.
  template <typename ColumnEnum>
  std::span<const uint8_t> bytes(ColumnEnum c, size_t row) const {
    return bytes(static_cast<unsigned>(c), row);
  }
  std::span<const uint8_t> bytes(unsigned column, size_t row) const;

  std::vector<std::vector<uint64_t>>& mutableColumns() { return columns_; }
  // Used by the reader: a kBytes column's concatenated blobs, `size` bytes at
  // `buffer` + `at` (the decompressed column, lengths first); its values
  // (already in mutableColumns()) are the lengths. bytes() hands out spans of
  // the buffer, never copies.
  void setBlobs(unsigned column, std::shared_ptr<uint8_t[]> buffer, size_t at, size_t size);
  // Drops a kBytes column's blobs (bytes() then reads empty) so its buffer
  // goes back to the pool before the chunk does: for a reader that is done
  // with them early (the unwinder, with the stack copies).
  void releaseBlobs(unsigned column);

 private:
  EventKind kind_;
  size_t rows_;
  std::vector<std::vector<uint64_t>> columns_;
  struct Blobs {
    std::shared_ptr<uint8_t[]> buffer;
    const uint8_t* data = nullptr;
    std::vector<uint64_t> offsets;  // rows + 1 prefix sums of the lengths
  };
  std::vector<Blobs> blobs_;  // indexed by column
};

// Uninitialised storage of at least `size` bytes for a decompressed byte-blob
// column. Buffers come back to a small process-wide pool when the last chunk
// using one goes, so streaming a trace reuses a few warm buffers instead of
// mapping (and page-faulting) fresh megabytes per chunk.
std::shared_ptr<uint8_t[]> acquireBlobBuffer(size_t size);

// Per-column sizes, for `incise info`.
struct ColumnSize {
  uint16_t id = 0;
  Encoding encoding{};
  Compression compression{};
  uint64_t raw_bytes = 0;
  uint64_t stored_bytes = 0;
};

struct Damage {
  uint64_t offset = 0;
  uint64_t length = 0;  // bytes skipped until the next good block (or end of file)
  std::string reason;
};

struct RecoveryReport {
  bool used_footer = true;       // false: the index was rebuilt by scanning
  std::string why_scanned;       // the footer/trailer problem that forced a scan
  uint64_t blocks_salvaged = 0;  // good blocks found by the scan
  uint64_t bytes_salvaged = 0;
  uint64_t file_size = 0;
  uint64_t first_damage = UINT64_MAX;  // offset where the first damage starts
  std::vector<Damage> damage;
  // Regions read from the copy the writer makes while merging small chunks
  // (format/region_merge.h): it was stopped in the middle of a merge.
  uint64_t regions_from_copies = 0;
  // The header block was damaged: the rest was read as this reader's own
  // format, the start is the first event's time, and the host, command
  // line and recording options are unknown (empty).
  bool header_lost = false;
  std::string why_header_lost;
  bool clean() const { return used_footer && damage.empty(); }
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

class StackTable {
 public:
  // Frames of `id`, leaf first; empty for 0 or an id the file does not have.
  std::span<const uint64_t> frames(uint64_t id) const;
  size_t size() const { return offsets_.empty() ? 0 : offsets_.size() - 1; }
  uint64_t maxId() const { return size(); }

  // Used by the reader: ids arrive in order, starting at 1.
  void append(uint64_t id, std::span<const uint64_t> frames);
  // The same for a whole decoded stack chunk: stacks first_id, first_id + 1,
  // ... with counts[i] frames each, back to back in `frames`, which is kept
  // as it is (no copy; copying every chunk into one growing array was a
  // good part of opening a system-wide trace). The counts must sum to at
  // most frames.size().
  void appendChunk(uint64_t first_id, std::span<const uint64_t> counts,
                   std::vector<uint64_t>&& frames);

 private:
  // Frames live in blocks: one per appendChunk, and a growing one for
  // append(). Stack `id` is frames [offsets_[id-1], offsets_[id]) of the
  // blocks laid end to end, always within one block; ids missing from a
  // salvaged file are empty.
  std::vector<std::vector<uint64_t>> blocks_;
  std::vector<uint64_t> block_starts_;  // offset of each block's first frame
  bool last_block_grows_ = false;       // blocks_.back() takes append()s
  uint64_t frame_count_ = 0;
  std::vector<uint64_t> offsets_;
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

// ---- implementation of Chunk::row ------------------------------------------

namespace detail {
template <typename Row>
struct RowFiller;
#define INCISE_FILL(field, encoding, doc)                  \
  {                                                        \
    auto col = chunk.column(static_cast<unsigned>(index)); \
    if (i < col.size()) row.field = col[i];                \
    ++index;                                               \
  }
#define INCISE_X(enumerator, id, Struct, COLUMNS, doc) \
  template <>                                          \
  struct RowFiller<Struct> {                           \
    static Struct fill(const Chunk& chunk, size_t i) { \
      Struct row;                                      \
      unsigned index = 0;                              \
      COLUMNS(INCISE_FILL)                             \
      return row;                                      \
    }                                                  \
  };
INCISE_EVENT_KINDS(INCISE_X)
#undef INCISE_X
#undef INCISE_FILL
}  // namespace detail

template <typename Row>
Row Chunk::row(size_t i) const {
  return detail::RowFiller<Row>::fill(*this, i);
}

}  // namespace incise::format
