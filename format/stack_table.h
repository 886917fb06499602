// StackTable: the frames of every stack a trace interned, by id, as the
// reader rebuilds it from the file's stack chunks.
//
//   std::span<const uint64_t> leaf_first = reader->stacks().frames(sample.stack_id);
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace incise::format {

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

}  // namespace incise::format
