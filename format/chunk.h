// Chunk: the decoded columns of one event chunk, and what names a chunk
// before it is decoded (ChunkRef: where it is, its kind, rows and time range)
// and which of its columns to decode (ColumnSet). Rows come out as the
// event_kinds.h structs; columns not decoded read as 0.
//
//   auto chunk = reader->readChunk(ref, {CpuSampleColumn::time, CpuSampleColumn::stack_id});
//   for (size_t i = 0; i < chunk->rows(); ++i) use(chunk->row<CpuSample>(i).stack_id);
//   std::span<const uint8_t> copy = chunk->bytes(CpuSampleColumn::user_stack, i);
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <vector>

#include "format/event_kinds.h"
#include "format/file_layout.h"

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
  template <typename ColumnEnum>
  bool has(ColumnEnum column) const {
    return has(static_cast<unsigned>(column));
  }
  bool isAll() const { return bits_ == ~uint64_t{0}; }
  ColumnSet operator|(ColumnSet other) const {
    ColumnSet s;
    s.bits_ = bits_ | other.bits_;
    return s;
  }
  bool operator==(const ColumnSet&) const = default;

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
