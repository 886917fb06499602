#include "analyzer/reports/stack_weights.h"

#include <algorithm>

#include "analyzer/model/stack_namer.h"

namespace incise::analyzer {
namespace {

constexpr uint64_t kNarrowIdLimit = uint64_t{1} << 32;

uint64_t hashOf(std::span<const NameId> ids) {
  uint64_t hash = 0x9e3779b97f4a7c15u ^ ids.size();
  for (NameId id : ids) {
    hash ^= id;
    hash *= 0xff51afd7ed558ccdu;
    hash ^= hash >> 32;
  }
  return hash;
}

}  // namespace

void NamedStacks::add(std::span<const NameId> root_first, uint64_t weight, uint64_t events) {
  uint64_t hash = hashOf(root_first);
  auto [first, last] = by_hash_.equal_range(hash);
  for (auto it = first; it != last; ++it) {
    WeightedStack& known = stacks_[it->second];
    if (std::equal(known.root_first.begin(), known.root_first.end(), root_first.begin(),
                   root_first.end())) {
      known.weight += weight;
      known.events += events;
      return;
    }
  }
  by_hash_.emplace(hash, static_cast<uint32_t>(stacks_.size()));
  stacks_.push_back({{root_first.begin(), root_first.end()}, weight, events});
}

void StackWeights::add(uint32_t pid, uint64_t stack_id, uint64_t time, uint64_t weight) {
  Entry* entry = nullptr;
  if (stack_id < kNarrowIdLimit) {
    entry = &entries_[key(pid, stack_id)];
  } else {
    entry = &wide_[pid][stack_id];
    if (entry->events == 0) ++wide_count_;
  }
  if (entry->events == 0) entry->first_time = time;
  entry->weight += weight;
  entry->events += 1;
  total_ += weight;
}

NamedStacks StackWeights::named(StackNamer& namer, const std::string& no_stack_name) const {
  NamedStacks stacks(namer.names());
  NameId no_stack[1] = {};
  bool no_stack_interned = false;
  auto emit = [&](uint32_t pid, uint64_t stack_id, const Entry& entry) {
    std::span<const NameId> path = namer.rootFirst(pid, stack_id, entry.first_time);
    if (path.empty()) {
      // Interned on first use, so a trace where every stack has frames has no such name.
      if (!no_stack_interned) no_stack[0] = namer.names().intern(no_stack_name);
      no_stack_interned = true;
      path = no_stack;
    }
    stacks.add(path, entry.weight, entry.events);
  };
  for (const auto& [k, entry] : entries_) {
    emit(static_cast<uint32_t>(k & 0xffffffffu), k >> 32, entry);
  }
  for (const auto& [pid, by_stack] : wide_) {
    for (const auto& [stack_id, entry] : by_stack)
      emit(static_cast<uint32_t>(pid), stack_id, entry);
  }
  return stacks;
}

}  // namespace incise::analyzer
