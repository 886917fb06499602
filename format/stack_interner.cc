// Hash-then-compare stack interning with a bounded table.
#include "format/stack_interner.h"

#include <xxhash.h>

#include <algorithm>

namespace incise::format {

void StackInterner::reset() {
  slots_.assign(slots_.size(), Slot{0, kEmpty});
  entries_.clear();
  frames_.clear();
  ++resets_;
}

void StackInterner::grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? 1024 : old.size() * 2, Slot{0, kEmpty});
  size_t mask = slots_.size() - 1;
  for (const Slot& slot : old) {
    if (slot.entry == kEmpty) continue;
    size_t i = slot.hash & mask;
    while (slots_[i].entry != kEmpty) i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

std::pair<uint64_t, bool> StackInterner::intern(std::span<const uint64_t> frames) {
  if (slots_.empty()) grow();
  uint64_t hash = XXH3_64bits(frames.data(), frames.size_bytes());
  size_t mask = slots_.size() - 1;
  size_t i = hash & mask;
  for (; slots_[i].entry != kEmpty; i = (i + 1) & mask) {
    if (slots_[i].hash != hash) continue;
    const Entry& e = entries_[slots_[i].entry];
    if (e.frame_count == frames.size() &&
        std::equal(frames.begin(), frames.end(), frames_.begin() + e.first_frame)) {
      return {e.id, false};
    }
  }
  if (entries_.size() >= max_stacks_ || frames_.size() + frames.size() > UINT32_MAX) {
    reset();
    return intern(frames);
  }
  if ((entries_.size() + 1) * 2 > slots_.size()) {
    grow();
    return intern(frames);
  }
  slots_[i] = Slot{hash, static_cast<uint32_t>(entries_.size())};
  entries_.push_back(Entry{next_id_++, static_cast<uint32_t>(frames_.size()),
                           static_cast<uint32_t>(frames.size())});
  frames_.insert(frames_.end(), frames.begin(), frames.end());
  return {entries_.back().id, true};
}

}  // namespace incise::format
