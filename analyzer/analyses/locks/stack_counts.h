// StackCounts: a count per stack id, for the stacks sampled (or faulting)
// inside a lock holder's critical sections (holder_activity.h).
//
// There may be one per critical section, so an empty one is a bare vector
// (24 bytes) and an entry is 16 bytes, not a map node. A lock held for most
// of a trace may see hundreds of thousands of distinct stacks inside, so
// adding one must not move all the others, as an insert into one sorted
// vector would (a quadratic cost). The vector is a row of sorted runs whose
// sizes are the set bits of its size, largest first: a new stack is a run
// of one, merged with the runs of equal size before it (a binary counter),
// so each entry moves O(log n) times and a lookup searches at most
// log2(n) + 1 runs.
//
//   StackCounts counts;
//   counts.add(21, work);           // work += entries read and moved
//   counts.at(21);                  // 1
//   for (auto [stack, n] : counts.byStack()) ...   // in stack id order
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace incise::analyzer {

class StackCounts {
 public:
  using Entry = std::pair<uint64_t, uint64_t>;  // stack id, count

  // One more for `stack_id`; `work` grows by the entries read and moved.
  void add(uint64_t stack_id, uint64_t& work);
  // The count of `stack_id`; throws std::out_of_range when it has none.
  uint64_t at(uint64_t stack_id) const;
  size_t count(uint64_t stack_id) const { return find(stack_id, nullptr) ? 1 : 0; }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  // Every entry, by stack id.
  std::vector<Entry> byStack() const;
  bool operator==(const StackCounts& other) const { return byStack() == other.byStack(); }

 private:
  // The entry of `stack_id`, or nullptr; `work` (when given) grows by the
  // entries read.
  const Entry* find(uint64_t stack_id, uint64_t* work) const;
  Entry* find(uint64_t stack_id, uint64_t* work) {
    return const_cast<Entry*>(std::as_const(*this).find(stack_id, work));
  }

  std::vector<Entry> entries_;
};

}  // namespace incise::analyzer
