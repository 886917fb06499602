// Comparability: whether two traces can be compared fairly, and what
// `incise diff` does about it when they cannot quite.
//
// Checks: the same objects with different build-ids (a different binary:
// addresses mean nothing across them, names still do), traces or objects
// without build-ids (then it cannot tell, and says so), objects in one trace
// only, durations more than kDurationRatio apart, sample rates (requested or
// achieved) more than kRateRatio apart, too few samples for shares to mean
// much, different hosts or kernels, sampled allocations (--alloc) in one
// trace only, at different means, or too few of them. Each finding says what was done about it
// (CPU compared as shares of each trace's samples; off-CPU per second of
// trace; lock percentiles are per acquisition, unaffected by length).
//
//   for (const ComparabilityNote& note : assessComparability(base.facts, next.facts))
//     std::cout << note.message << " -> " << note.action << "\n";
#pragma once

#include <string>
#include <vector>

#include "analyzer/diff/trace_facts.h"

namespace incise::analyzer {

inline constexpr double kDurationRatio = 2.0;
inline constexpr double kRateRatio = 1.5;
inline constexpr uint64_t kFewSamples = 100;

struct ComparabilityNote {
  std::string kind;  // build-id, objects, duration, sample-rate, samples, host, kernel, allocations
  std::string message;  // what differs
  std::string action;   // what the diff did about it
};

std::vector<ComparabilityNote> assessComparability(const TraceFacts& base, const TraceFacts& next);

}  // namespace incise::analyzer
