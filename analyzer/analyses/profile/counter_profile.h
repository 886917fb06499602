// Per-function counts of the --counters a trace's samples carry (format
// 2.9): what `incise top --counters` adds to the flat profile.
//
// A sample's count of a counter is what the counter counted since the
// previous sample of the same perf event (of its thread with -p and -- CMD,
// of its cpu with -a and --cgroup), so it is charged to that sample's stack:
// self to the leaf, total to every function on it (once per stack), exactly
// as the samples' own weight is. What a thread counted after its last sample
// is charged to no stack.
//
//   std::vector<StackWeights> counts;
//   StackWeights samples = collectOnCpuWeights(trace, &counts);   // flame_weights.h
//   StackNamer namer(trace, FrameGrouping::kFunction);
//   CounterProfile counters = computeCounterProfile(trace, counts, namer);
//   for (size_t c = 0; c < counters.names.size(); ++c)
//     counters.of("touch_pages")[c].self;   // faults taken in touch_pages
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/analyses/profile/stack_weights.h"
#include "analyzer/model/stack_namer.h"
#include "analyzer/model/trace.h"

namespace incise::analyzer {

struct CounterCounts {
  uint64_t self = 0;
  uint64_t total = 0;
};

struct CounterProfile {
  std::vector<std::string> names;  // the header's --counters, in slot order
  std::vector<uint64_t> totals;    // each counter's sum over the samples kept
  // Per function (as the namer groups frames): one entry per counter.
  std::unordered_map<std::string, std::vector<CounterCounts>> by_name;

  // The counts of `name`, zeros where no sample of it counted anything.
  std::vector<CounterCounts> of(const std::string& name) const;
};

// `counts`: one StackWeights per counter slot, as collectOnCpuWeights fills them.
CounterProfile computeCounterProfile(const Trace& trace, const std::vector<StackWeights>& counts,
                                     StackNamer& namer);

}  // namespace incise::analyzer
