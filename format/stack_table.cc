// The reader's stack table: frames of every interned stack, by id.
#include "format/reader.h"

namespace incise::format {

std::span<const uint64_t> StackTable::frames(uint64_t id) const {
  if (id == 0 || id > size()) return {};
  return std::span<const uint64_t>(frames_).subspan(offsets_[id - 1],
                                                    offsets_[id] - offsets_[id - 1]);
}

void StackTable::append(uint64_t id, std::span<const uint64_t> frames) {
  if (offsets_.empty()) offsets_.push_back(0);
  if (id <= size()) return;  // already known: the first definition wins
  if (size() + 1 < id) offsets_.resize(id, offsets_.back());  // ids lost to damage: empty
  frames_.insert(frames_.end(), frames.begin(), frames.end());
  offsets_.push_back(frames_.size());
}

}  // namespace incise::format
