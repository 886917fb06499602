// Column gathering for one chunk.
#include "format/chunk_builder.h"

#include <algorithm>

namespace incise::format {

ChunkBuilder::ChunkBuilder(EventKind kind, uint32_t capacity)
    : kind_(static_cast<uint8_t>(kind)), capacity_(capacity) {
  const KindSpec* spec = kindSpec(kind);
  for (uint16_t i = 0; spec != nullptr && i < spec->column_count; ++i) {
    std::string_view name = spec->columns[i].name;
    encodings_.push_back(spec->columns[i].encoding);
    is_time_.push_back(name == "time" || name.ends_with("_time"));
    if (spec->columns[i].encoding == Encoding::kBytes) blob_columns_.push_back(i);
  }
  columns_.resize(encodings_.size());
  blobs_.resize(encodings_.size());
  attached_.resize(encodings_.size());
}

void ChunkBuilder::attachBytes(size_t column, std::span<const uint8_t> bytes) {
  if (column >= columns_.size() || encodings_[column] != Encoding::kBytes ||
      columns_[column].empty() || attached_[column]) {
    return;
  }
  columns_[column].back() = bytes.size();
  blobs_[column].append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  blob_bytes_ += bytes.size();
  attached_[column] = true;
}

void ChunkBuilder::rowAdded() {
  for (size_t c : blob_columns_) {
    // A row appended without bytes has an empty blob, whatever its field said.
    if (!attached_[c] && !columns_[c].empty()) columns_[c].back() = 0;
    attached_[c] = false;
  }
  if (rows_++ == 0) reserve();
}

ChunkBuilder ChunkBuilder::stackTable(uint32_t capacity) {
  ChunkBuilder b;
  b.kind_ = kStackTableKind;
  b.capacity_ = capacity;
  // Frames as 8 bytes each, not delta varints (format 2.0): stacks repeat
  // frames (their callers, the timer interrupt's kernel path), and zstd finds
  // an address repeated whole, but not a difference that depends on the
  // frame before it. lock_story's stack table: 5,256 -> 4,110 bytes.
  b.encodings_ = {Encoding::kVarint, Encoding::kFixed64};
  b.is_time_ = {false, false};
  b.columns_.resize(2);
  return b;
}

void ChunkBuilder::reserve() {
  for (auto& c : columns_) c.reserve(capacity_);
}

size_t ChunkBuilder::values() const {
  size_t n = 0;
  for (const auto& c : columns_) n += c.size();
  return n;
}

SealedChunk ChunkBuilder::seal(uint64_t first_stack_id) {
  SealedChunk s;
  s.kind = kind_;
  s.rows = rows_;
  s.first_stack_id = first_stack_id;
  s.encodings = encodings_;
  if (!columns_.empty() && is_time_[0] && !columns_[0].empty()) {
    auto [lo, hi] = std::minmax_element(columns_[0].begin(), columns_[0].end());
    s.min_time = *lo;
    s.max_time = *hi;
    for (size_t i = 1; i < columns_.size(); ++i) {
      if (is_time_[i] && !columns_[i].empty()) {
        s.max_time =
            std::max(s.max_time, *std::max_element(columns_[i].begin(), columns_[i].end()));
      }
    }
  }
  s.columns = std::move(columns_);
  columns_.assign(encodings_.size(), {});
  if (!blob_columns_.empty()) {
    s.blobs = std::move(blobs_);
    blobs_.assign(encodings_.size(), {});
  }
  blob_bytes_ = 0;
  rows_ = 0;
  return s;
}

}  // namespace incise::format
