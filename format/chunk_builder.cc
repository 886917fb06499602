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
  }
  columns_.resize(encodings_.size());
}

ChunkBuilder ChunkBuilder::stackTable(uint32_t capacity) {
  ChunkBuilder b;
  b.kind_ = kStackTableKind;
  b.capacity_ = capacity;
  b.encodings_ = {Encoding::kVarint, Encoding::kDeltaVarint};
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
  rows_ = 0;
  return s;
}

}  // namespace incise::format
