// The findings of `incise correlate`, ranked by the waiting each explains.
//
// Three kinds, each one sentence in the story (correlate_story.h):
//  - kHolderOffCpu: a holder switched out (preempted or blocked) inside its
//    sections; weight: the waiting on its lock while it was off-CPU there;
//  - kHolderOnCpu: what a holder did inside its sections (samples, page
//    faults); weight: the waiting on its lock while it held it on-CPU;
//  - kLongestWait: the longest lock wait, with its wake chain; weight: its
//    length.
// With a thread filter a group counts when its holder is one of the
// threads shown or they waited on it, and weighs what they waited; equal
// weights keep the groups' order (holder_activity.h) and the kinds' order.
//
//   std::vector<Finding> findings = rankFindings(correlation, /*limit=*/10);
//   for (const Finding& f : findings) print(f.kind, f.weight_ns, f.held->tid);
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "analyzer/analyses/correlate/correlate_analysis.h"

namespace incise::analyzer {

enum class FindingKind { kHolderOffCpu, kHolderOnCpu, kLongestWait };

struct Finding {
  FindingKind kind = FindingKind::kHolderOffCpu;
  uint64_t weight_ns = 0;
  const HeldLock* held = nullptr;  // kHolderOffCpu, kHolderOnCpu
  size_t chain = 0;                // kLongestWait: index into Correlation::chains
};

// Whether a group belongs in a filtered story (always without a filter).
bool inFocus(const HeldLock& held);

// The `limit` heaviest findings (0: all), heaviest first.
std::vector<Finding> rankFindings(const Correlation& correlation, size_t limit);

}  // namespace incise::analyzer
