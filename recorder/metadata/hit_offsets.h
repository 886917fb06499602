// HitOffsets: the file offsets the frames of new stacks hit in one large
// object (whose symbols are embedded only for the functions hit), each kept
// once.
//
// New stacks note thousands of offsets a second on a whole machine. An
// std::unordered_set's insert costs a division, a pointer chase and, for a
// new offset, an allocation; this is open addressing over a flat array (a
// multiplicative hash, linear probing, at most half full), so a note costs
// one probe of a cache line.
//
//   HitOffsets offsets;
//   offsets.add(0x1234);
//   offsets.add(0x1234);
//   offsets.sorted();  // {0x1234}
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace incise::recorder {

class HitOffsets {
 public:
  void add(uint64_t offset) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    insert(offset + 1);
  }
  size_t size() const { return size_; }
  // Each offset noted, once, in increasing order.
  std::vector<uint64_t> sorted() const {
    std::vector<uint64_t> out;
    out.reserve(size_);
    for (uint64_t slot : slots_)
      if (slot != kFree) out.push_back(slot - 1);
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  // Slots hold offset + 1, so that 0 marks a free one (an offset of
  // UINT64_MAX, past any file, is kept as 0 and so never noted).
  static constexpr uint64_t kFree = 0;
  void insert(uint64_t key) {
    if (key == kFree) return;
    const size_t mask = slots_.size() - 1;
    for (size_t i = (key * 0x9e3779b97f4a7c15ull) >> shift_;; i = (i + 1) & mask) {
      if (slots_[i] == key) return;
      if (slots_[i] == kFree) {
        slots_[i] = key;
        ++size_;
        return;
      }
    }
  }
  void grow() {
    std::vector<uint64_t> old = std::move(slots_);
    slots_.assign(old.empty() ? 1024 : old.size() * 2, kFree);
    shift_ = 64 - static_cast<unsigned>(std::countr_zero(slots_.size()));
    size_ = 0;
    for (uint64_t key : old)
      if (key != kFree) insert(key);
  }
  std::vector<uint64_t> slots_;  // a power of two of them
  unsigned shift_ = 64;          // the hash's top bits index slots_
  size_t size_ = 0;
};

}  // namespace incise::recorder
