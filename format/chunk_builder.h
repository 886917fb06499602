// Rows of one chunk being gathered column by column, before sealing.
//
// Columns allocate on the first row, so kinds a recording never uses cost
// nothing; seal() hands the columns over and starts a fresh chunk.
//
//   ChunkBuilder b(EventKind::kCpuSample, capacity);
//   b.column(0).push_back(t); ...; b.rowAdded();
//   if (b.rows() == capacity) queue(b.seal());
#pragma once

#include <cstdint>
#include <vector>

#include "format/chunk_codec.h"
#include "format/event_kinds.h"
#include "format/file_layout.h"

namespace incise::format {

class ChunkBuilder {
 public:
  ChunkBuilder() = default;
  // An event-kind chunk: columns and encodings from kindSpec(kind).
  ChunkBuilder(EventKind kind, uint32_t capacity);
  // The stack table: frame counts and frames.
  static ChunkBuilder stackTable(uint32_t capacity);

  std::vector<uint64_t>& column(size_t i) { return columns_[i]; }
  void rowAdded() {
    if (rows_++ == 0) reserve();
  }
  uint32_t rows() const { return rows_; }
  size_t values() const;  // total values held, for memory bounds

  // Moves the rows out (min/max time from the time columns) and starts over.
  SealedChunk seal(uint64_t first_stack_id = 0);

 private:
  void reserve();

  uint8_t kind_ = 0;
  uint32_t capacity_ = 0;
  uint32_t rows_ = 0;
  std::vector<Encoding> encodings_;
  std::vector<bool> is_time_;  // columns whose values are timestamps
  std::vector<std::vector<uint64_t>> columns_;
};

}  // namespace incise::format
