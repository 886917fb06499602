// DenseIdIndex: finds a dense id (0, 1, 2, ... numbered by the caller, who
// keeps the keys) from a key's 64-bit hash, by open addressing.
//
// The naming path of top and flame looks up one key per frame and per
// stack; std::unordered_map spent a node allocation on each entry (and the
// same again in free() at exit), while this index is one flat array of
// 8-byte slots: a 32-bit hash tag and the id. The caller compares keys, as
// only it knows where they live (a string in a NameTable, a path in
// NamedStacks, a symbolizer key). Header-only, as name_table.h uses it.
//
//   std::vector<std::string> names;
//   DenseIdIndex index;
//   auto [id, inserted] = index.findOrInsert(hash(text), names.size(),
//                                            [&](uint32_t id) { return names[id] == text; });
//   if (inserted) names.push_back(text);   // ids must be inserted densely, in order
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace incise::analyzer {

class DenseIdIndex {
 public:
  // The id whose key `matches`, or `next_id` (inserted) when none does.
  template <typename Matches>
  std::pair<uint32_t, bool> findOrInsert(uint64_t hash, uint32_t next_id, Matches&& matches) {
    if (2 * (used_ + 1) > slots_.size()) grow();
    const uint32_t tag = tagOf(hash);
    const size_t mask = slots_.size() - 1;
    for (size_t i = tag & mask;; i = (i + 1) & mask) {
      Slot& slot = slots_[i];
      if (slot.id_plus_one == 0) {
        slot = {tag, next_id + 1};
        ++used_;
        return {next_id, true};
      }
      if (slot.tag == tag && matches(slot.id_plus_one - 1)) return {slot.id_plus_one - 1, false};
    }
  }

  size_t size() const { return used_; }

 private:
  struct Slot {
    uint32_t tag = 0;
    uint32_t id_plus_one = 0;  // 0: empty
  };

  // The high half, mixed with the low one: callers' hashes differ in either.
  static uint32_t tagOf(uint64_t hash) {
    hash ^= hash >> 29;
    hash *= 0xbf58476d1ce4e5b9ULL;
    return static_cast<uint32_t>(hash >> 32);
  }

  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{});
    const size_t mask = slots_.size() - 1;
    for (const Slot& slot : old) {
      if (slot.id_plus_one == 0) continue;
      size_t i = slot.tag & mask;
      while (slots_[i].id_plus_one != 0) i = (i + 1) & mask;
      slots_[i] = slot;
    }
  }

  std::vector<Slot> slots_;  // a power of two, at most half full
  size_t used_ = 0;
};

}  // namespace incise::analyzer
