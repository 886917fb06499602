// What a trace's sampled allocations (--alloc) add up to, per (process,
// stack): bytes and allocations estimated from the samples, and what was
// still live (sampled blocks not freed) at the end of the recording, or of
// the --time window: the leak report.
//
// Each sample stands for its weight in bytes (format::Allocation); its
// allocations are weight / size (a small block sampled at a mean of N bytes
// stands for about N / size allocations of its size). A block is live at
// the end when no free of its address in its process follows its
// allocation, before the address is allocated again.
//
//   AllocProfile profile = collectAllocProfile(trace);
//   for (const auto& [key, totals] : profile.stacks) use(key.pid, key.stack_id, totals.live_bytes);
#pragma once

#include <cstdint>
#include <map>

#include "analyzer/analyses/profile/stack_weights.h"
#include "analyzer/model/trace.h"

namespace incise::analyzer {

struct AllocTotals {
  uint64_t allocated_bytes = 0;  // estimated: the samples' weights
  uint64_t allocated_milli = 0;  // estimated allocations, in thousandths
  uint64_t samples = 0;
  uint64_t live_bytes = 0;  // of the samples not freed by the end
  uint64_t live_milli = 0;
  uint64_t live_samples = 0;
  uint64_t first_time = 0;  // the first sample's (for naming its stack)

  uint64_t allocations() const { return (allocated_milli + 500) / 1000; }
  uint64_t liveAllocations() const { return (live_milli + 500) / 1000; }
  void add(const AllocTotals& other);
};

struct AllocStackKey {
  uint32_t pid = 0;
  uint64_t stack_id = 0;
  auto operator<=>(const AllocStackKey&) const = default;
};

struct AllocProfile {
  std::map<AllocStackKey, AllocTotals> stacks;
  AllocTotals total;
  // Frees of sampled blocks allocated before the recording (or the window)
  // or by a process the filters left out: nothing to match them with.
  uint64_t unmatched_frees = 0;
  // The mean bytes between samples the command was started with; 0 when
  // the process chose its own (-p, -a) or the trace has no --alloc rows.
  uint64_t sample_bytes = 0;
};

AllocProfile collectAllocProfile(Trace& trace);

// Bytes per (pid, stack) for a flame graph: allocated, or live at the end.
enum class AllocWeighting { kAllocated, kLive };
StackWeights allocStackWeights(const AllocProfile& profile, AllocWeighting weighting);

}  // namespace incise::analyzer
