// StackWeights: weight per (pid, stack id), summed while rows stream by,
// then named once per distinct stack into NamedStacks, where stacks whose
// names are equal merge.
//
// This is what keeps top and flame bounded by distinct stacks rather than by
// events: the map holds one entry per (pid, stack id), and each entry is
// symbolized once, at the first time it was seen (so JIT maps and mappings
// valid then are used). Named stacks carry name ids (NameTable), not text,
// and the same call path in 50 processes of one binary is one NamedStacks
// entry, so what follows (flat profile, folded stacks) is bounded by distinct
// named paths.
//
//   StackWeights weights;
//   trace.forEachRow<format::CpuSample>(
//       [&](const auto& s) { weights.add(s.pid, s.stack_id, s.time, 1); });
//   StackNamer namer(trace, FrameGrouping::kFunction);
//   NamedStacks stacks = weights.named(namer);
//   for (const WeightedStack& stack : stacks) stacks.names().name(stack.root_first.back());
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/model/name_table.h"
#include "analyzer/symbolize/dense_id_index.h"

namespace incise::analyzer {

class StackNamer;

// A named call path, root first, with the weight and number of events on it.
// The ids live in the NamedStacks that holds this stack.
struct WeightedStack {
  std::span<const NameId> root_first;
  uint64_t weight = 0;
  uint64_t events = 0;
};

// Distinct named call paths, in the order first added; adding a path that is
// already there adds to its weight and events. Names live in a NameTable the
// caller keeps alive (the StackNamer's). Paths are kept back to back in a few
// large blocks (moving a NamedStacks keeps them where they are), not in a
// vector each: one allocation per stack was a good part of naming 16 k
// stacks, and of freeing them.
class NamedStacks {
 public:
  explicit NamedStacks(const NameTable& names) : names_(&names) {}
  NamedStacks(NamedStacks&&) = default;
  NamedStacks& operator=(NamedStacks&&) = default;
  void add(std::span<const NameId> root_first, uint64_t weight, uint64_t events);
  // Room for `stacks` distinct paths without growing.
  void reserve(size_t stacks) { stacks_.reserve(stacks); }
  const NameTable& names() const { return *names_; }
  std::vector<std::string> rootFirstNames(const WeightedStack& stack) const {
    return names_->names(stack.root_first);
  }
  const std::vector<WeightedStack>& stacks() const { return stacks_; }
  std::vector<WeightedStack>::const_iterator begin() const { return stacks_.begin(); }
  std::vector<WeightedStack>::const_iterator end() const { return stacks_.end(); }
  size_t size() const { return stacks_.size(); }

 private:
  static constexpr size_t kIdsPerBlock = size_t{1} << 14;
  std::span<const NameId> keep(std::span<const NameId> root_first);

  const NameTable* names_;
  std::vector<WeightedStack> stacks_;
  DenseIdIndex by_path_;  // path -> index in stacks_
  std::vector<std::unique_ptr<NameId[]>> blocks_;
  size_t block_size_ = 0;  // of blocks_.back()
  size_t block_used_ = 0;
};

class StackWeights {
 public:
  // `events` (at least 1; 0 adds nothing) is how many things `weight` sums.
  void add(uint32_t pid, uint64_t stack_id, uint64_t time, uint64_t weight, uint64_t events = 1);
  // Distinct (pid, stack id) pairs seen.
  size_t distinct() const { return entries_.size() + wide_count_; }
  uint64_t total() const { return total_; }
  // The stacks named and merged by name; stacks that have no frames (id 0
  // or unknown) are named `no_stack_name`.
  NamedStacks named(StackNamer& namer, const std::string& no_stack_name = "[no stack]") const;

 private:
  struct Entry {
    uint64_t weight = 0;
    uint64_t events = 0;
    uint64_t first_time = 0;
  };
  static uint64_t key(uint32_t pid, uint64_t stack_id) { return stack_id << 32 | pid; }
  // Stack ids are below 2^32 in any file the writer can make; larger ones
  // fall back to the (rarely used) wide map. Narrow entries are found
  // through one flat index (keys_[i] -> entries_[i], in the order first seen).
  DenseIdIndex index_;
  std::vector<uint64_t> keys_;
  std::vector<Entry> entries_;
  std::unordered_map<uint64_t, std::unordered_map<uint64_t, Entry>> wide_;
  size_t wide_count_ = 0;
  uint64_t total_ = 0;
};

}  // namespace incise::analyzer
