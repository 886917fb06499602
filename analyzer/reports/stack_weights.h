// StackWeights: weight per (pid, stack id), summed while rows stream by,
// then named once per distinct stack.
//
// This is what keeps top and flame bounded by distinct stacks rather than by
// events: the map holds one entry per (pid, stack id), and each entry is
// symbolized once, at the first time it was seen (so JIT maps and mappings
// valid then are used).
//
//   StackWeights weights;
//   trace.forEachRow<format::CpuSample>([&](const auto& s) { weights.add(s.pid, s.stack_id, s.time,
//   1); }); StackNamer namer(trace, FrameGrouping::kFunction); for (const WeightedStack& stack :
//   weights.named(namer)) ...
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace incise::analyzer {

class StackNamer;

// A named call path, root first, with the weight and number of events on it.
struct WeightedStack {
  std::vector<std::string> root_first;
  uint64_t weight = 0;
  uint64_t events = 0;
};

class StackWeights {
 public:
  void add(uint32_t pid, uint64_t stack_id, uint64_t time, uint64_t weight);
  size_t distinct() const { return entries_.size(); }
  uint64_t total() const { return total_; }
  // One WeightedStack per distinct (pid, stack id); stacks that have no
  // frames (id 0 or unknown) are named `no_stack_name`.
  std::vector<WeightedStack> named(StackNamer& namer,
                                   const std::string& no_stack_name = "[no stack]") const;

 private:
  struct Entry {
    uint64_t weight = 0;
    uint64_t events = 0;
    uint64_t first_time = 0;
  };
  static uint64_t key(uint32_t pid, uint64_t stack_id) { return stack_id << 32 | pid; }
  // Stack ids are below 2^32 in any file the writer can make; larger ones
  // fall back to the (rarely used) wide map.
  std::unordered_map<uint64_t, Entry> entries_;
  std::unordered_map<uint64_t, std::unordered_map<uint64_t, Entry>> wide_;
  uint64_t total_ = 0;
};

}  // namespace incise::analyzer
