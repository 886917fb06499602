// Rows of one chunk being gathered column by column, before sealing.
//
// Columns allocate on the first row, so kinds a recording never uses cost
// nothing; seal() hands the columns over and starts a fresh chunk.
//
//   ChunkBuilder b(EventKind::kCpuSample, capacity);
//   b.column(0).push_back(t); ...; b.rowAdded();
//   if (b.rows() == capacity) queue(b.seal());
//
// A kBytes column gets its value (the blob length) and bytes through
// attachBytes() before rowAdded(); a row pushed without bytes gets length 0.
#pragma once

#include <cstdint>
#include <span>
#include <string>
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
  // For the row being added, after its values were pushed.
  void attachBytes(size_t column, std::span<const uint8_t> bytes);
  void rowAdded();
  uint64_t blobBytes() const { return blob_bytes_; }
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
  std::vector<std::string> blobs_;    // per column; only kBytes columns fill theirs
  std::vector<size_t> blob_columns_;  // which columns are kBytes
  std::vector<bool> attached_;        // per column: bytes given for the current row
  uint64_t blob_bytes_ = 0;
};

}  // namespace incise::format
