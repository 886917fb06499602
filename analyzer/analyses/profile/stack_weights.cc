#include "analyzer/analyses/profile/stack_weights.h"

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
  auto [index, inserted] = by_path_.findOrInsert(
      hashOf(root_first), static_cast<uint32_t>(stacks_.size()), [&](uint32_t known) {
        const std::span<const NameId> path = stacks_[known].root_first;
        return std::equal(path.begin(), path.end(), root_first.begin(), root_first.end());
      });
  if (inserted) {
    stacks_.push_back({keep(root_first), weight, events});
    return;
  }
  stacks_[index].weight += weight;
  stacks_[index].events += events;
}

std::span<const NameId> NamedStacks::keep(std::span<const NameId> root_first) {
  if (blocks_.empty() || root_first.size() > block_size_ - block_used_) {
    block_size_ = std::max(kIdsPerBlock, root_first.size());
    block_used_ = 0;
    blocks_.push_back(std::make_unique_for_overwrite<NameId[]>(block_size_));
  }
  NameId* kept = blocks_.back().get() + block_used_;
  std::copy(root_first.begin(), root_first.end(), kept);
  block_used_ += root_first.size();
  return {kept, root_first.size()};
}

void StackWeights::add(uint32_t pid, uint64_t stack_id, uint64_t time, uint64_t weight,
                       uint64_t events) {
  if (events == 0) return;
  Entry* entry = nullptr;
  if (stack_id < kNarrowIdLimit) {
    const uint64_t k = key(pid, stack_id);
    auto [index, inserted] =
        index_.findOrInsert(k * 0x9e3779b97f4a7c15u, static_cast<uint32_t>(keys_.size()),
                            [&](uint32_t known) { return keys_[known] == k; });
    if (inserted) {
      keys_.push_back(k);
      entries_.emplace_back();
    }
    entry = &entries_[index];
  } else {
    entry = &wide_[pid][stack_id];
    if (entry->events == 0) ++wide_count_;
  }
  if (entry->events == 0) entry->first_time = time;
  entry->weight += weight;
  entry->events += events;
  total_ += weight;
}

NamedStacks StackWeights::named(StackNamer& namer, const std::string& no_stack_name) const {
  NamedStacks stacks(namer.names());
  stacks.reserve(distinct());  // at most one named path per (pid, stack id)
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
  for (size_t i = 0; i < keys_.size(); ++i) {
    emit(static_cast<uint32_t>(keys_[i] & 0xffffffffu), keys_[i] >> 32, entries_[i]);
  }
  for (const auto& [pid, by_stack] : wide_) {
    for (const auto& [stack_id, entry] : by_stack)
      emit(static_cast<uint32_t>(pid), stack_id, entry);
  }
  return stacks;
}

}  // namespace incise::analyzer
