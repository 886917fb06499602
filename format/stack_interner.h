// Stack interning for the writer: frames -> id, ids from 1 upward.
//
// The table is keyed by a hash of the frames and confirms a hit by comparing
// the frames, so two stacks never share an id. When it holds more than
// max_stacks it is cleared, so memory stays bounded however long the
// recording; ids keep increasing, so a stack seen again after a reset gets a
// new id and is written again (correct, just not deduplicated across resets).
//
//   StackInterner interner(1 << 20);
//   auto [id, fresh] = interner.intern(frames);
//   if (fresh) stackTable.append(id, frames);
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace incise::format {

class StackInterner {
 public:
  explicit StackInterner(uint32_t max_stacks) : max_stacks_(max_stacks ? max_stacks : 1) {}

  // {id, true} the first time `frames` is seen (since the last reset).
  // `frames` must not be empty (the empty stack is id 0, not interned).
  std::pair<uint64_t, bool> intern(std::span<const uint64_t> frames);

  size_t size() const { return entries_.size(); }
  uint64_t resets() const { return resets_; }
  uint64_t lastId() const { return next_id_ - 1; }

 private:
  struct Entry {
    uint64_t id;
    uint32_t first_frame;
    uint32_t frame_count;
  };
  // Open addressing with linear probing: no node per stack, one cache line
  // per probe. `entry` is kEmpty for a free slot.
  struct Slot {
    uint64_t hash;
    uint32_t entry;
  };
  static constexpr uint32_t kEmpty = UINT32_MAX;
  void reset();
  void grow();

  uint32_t max_stacks_;
  uint64_t next_id_ = 1;
  uint64_t resets_ = 0;
  std::vector<Slot> slots_;  // size a power of two, at most half full
  std::vector<Entry> entries_;
  std::vector<uint64_t> frames_;
};

}  // namespace incise::format
