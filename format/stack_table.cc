// The reader's stack table: frames of every interned stack, by id.
#include "format/stack_table.h"

#include <algorithm>

namespace incise::format {

std::span<const uint64_t> StackTable::frames(uint64_t id) const {
  if (id == 0 || id > size()) return {};
  const uint64_t begin = offsets_[id - 1], end = offsets_[id];
  if (begin == end) return {};
  // The last block starting at or before `begin` holds the whole stack.
  const auto block = std::upper_bound(block_starts_.begin(), block_starts_.end(), begin) - 1;
  const auto index = static_cast<size_t>(block - block_starts_.begin());
  return std::span<const uint64_t>(blocks_[index]).subspan(begin - *block, end - begin);
}

void StackTable::append(uint64_t id, std::span<const uint64_t> frames) {
  if (offsets_.empty()) offsets_.push_back(0);
  if (id <= size()) return;  // already known: the first definition wins
  if (size() + 1 < id) offsets_.resize(id, offsets_.back());  // ids lost to damage: empty
  if (!last_block_grows_) {
    blocks_.emplace_back();
    block_starts_.push_back(frame_count_);
    last_block_grows_ = true;
  }
  blocks_.back().insert(blocks_.back().end(), frames.begin(), frames.end());
  frame_count_ += frames.size();
  offsets_.push_back(frame_count_);
}

void StackTable::appendChunk(uint64_t first_id, std::span<const uint64_t> counts,
                             std::vector<uint64_t>&& frames) {
  if (offsets_.empty()) offsets_.push_back(0);
  if (first_id <= size()) {
    // Overlaps ids already known (the first definition wins): stack by stack.
    size_t at = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      append(first_id + i, std::span<const uint64_t>(frames).subspan(at, counts[i]));
      at += counts[i];
    }
    return;
  }
  if (size() + 1 < first_id) offsets_.resize(first_id, offsets_.back());  // lost ids: empty
  block_starts_.push_back(frame_count_);
  uint64_t at = frame_count_;
  for (uint64_t count : counts) {
    at += count;
    offsets_.push_back(at);
  }
  frame_count_ += frames.size();
  blocks_.push_back(std::move(frames));
  last_block_grows_ = false;
}

}  // namespace incise::format
