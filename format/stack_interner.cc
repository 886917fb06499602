// Hash-then-compare stack interning with a bounded table.
#include "format/stack_interner.h"

#include <xxhash.h>

#include <algorithm>

namespace incise::format {

void StackInterner::reset() {
  by_hash_.clear();
  entries_.clear();
  frames_.clear();
  ++resets_;
}

std::pair<uint64_t, bool> StackInterner::intern(std::span<const uint64_t> frames) {
  uint64_t hash = XXH3_64bits(frames.data(), frames.size_bytes());
  auto found = by_hash_.find(hash);
  int32_t head = -1;
  if (found != by_hash_.end()) {
    head = found->second;
    for (int32_t i = head; i >= 0; i = entries_[static_cast<size_t>(i)].next) {
      const Entry& e = entries_[static_cast<size_t>(i)];
      if (e.frame_count == frames.size() &&
          std::equal(frames.begin(), frames.end(), frames_.begin() + e.first_frame)) {
        return {e.id, false};
      }
    }
  }
  if (entries_.size() >= max_stacks_ || frames_.size() + frames.size() > UINT32_MAX) {
    reset();
    head = -1;
  }
  Entry e{next_id_++, static_cast<uint32_t>(frames_.size()), static_cast<uint32_t>(frames.size()),
          head};
  frames_.insert(frames_.end(), frames.begin(), frames.end());
  by_hash_[hash] = static_cast<int32_t>(entries_.size());
  entries_.push_back(e);
  return {e.id, true};
}

}  // namespace incise::format
