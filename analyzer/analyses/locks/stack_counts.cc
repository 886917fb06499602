#include "analyzer/analyses/locks/stack_counts.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace incise::analyzer {
namespace {

bool byId(const StackCounts::Entry& a, const StackCounts::Entry& b) {
  return a.first < b.first;
}

}  // namespace

void StackCounts::add(uint64_t stack_id, uint64_t& work) {
  if (Entry* entry = find(stack_id, &work)) {
    ++entry->second;
    return;
  }
  entries_.push_back({stack_id, 1});
  // The runs before were the set bits of size - 1: the new run of one
  // carries through its trailing ones.
  const size_t size = entries_.size();
  for (size_t run = 1; (size & run) == 0; run <<= 1) {
    auto end = entries_.end();
    std::inplace_merge(end - static_cast<std::ptrdiff_t>(2 * run),
                       end - static_cast<std::ptrdiff_t>(run), end, byId);
    work += 2 * run;
  }
}

uint64_t StackCounts::at(uint64_t stack_id) const {
  const Entry* entry = find(stack_id, nullptr);
  if (!entry) throw std::out_of_range("no such stack");
  return entry->second;
}

std::vector<StackCounts::Entry> StackCounts::byStack() const {
  std::vector<Entry> sorted = entries_;
  std::sort(sorted.begin(), sorted.end(), byId);
  return sorted;
}

const StackCounts::Entry* StackCounts::find(uint64_t stack_id, uint64_t* work) const {
  const size_t size = entries_.size();
  const Entry* start = entries_.data();
  // Runs largest first: one per set bit of the size.
  for (size_t run = size == 0 ? 0 : std::bit_floor(size); run != 0; run >>= 1) {
    if ((size & run) == 0) continue;
    const Entry* end = start + run;
    const Entry* found = std::lower_bound(start, end, Entry{stack_id, 0}, byId);
    if (work) *work += std::bit_width(run);
    if (found != end && found->first == stack_id) return found;
    start = end;
  }
  return nullptr;
}

}  // namespace incise::analyzer
