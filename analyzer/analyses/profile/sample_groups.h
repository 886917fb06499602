// Sample groups: CPU samples split by who ran them, each group with its own
// flat profile (what `incise top --by goroutine` and `--by context:NAME`
// print). Sorted by samples, most first; ties by key. Only the first `limit`
// groups (0: all) are kept and profiled: the samples are read twice, once
// to count each group's, once for the stacks of those kept.
//
// A group's key is two numbers compared in order:
//   goroutineKey  (pid, goid): the goroutine the sample's thread was running
//                 (format 2.4, read by the recorder from the thread's current
//                 g; goid 0: outside any goroutine, or not a Go program).
//                 Goroutines are per process.
//   contextKey    the value of a context (--context NAME=SYMBOL) the
//                 sample's thread held (model/context_timeline.h): (0, value),
//                 or (1, 0) when unknown. Values are not per process: one
//                 request may cross processes.
//
//   SampleGroups groups = computeGoroutineGroups(trace, FrameGrouping::kFunction, /*limit=*/40);
//   SampleGroups values = computeContextGroups(trace, timeline, FrameGrouping::kFunction, 0);
//   for (const SampleGroup& g : values.groups) print(g.key.second, g.samples, g.profile.rows[0]);
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "analyzer/analyses/profile/flat_profile.h"
#include "analyzer/model/context_timeline.h"
#include "analyzer/model/stack_namer.h"

namespace incise::analyzer {

class Trace;

using SampleGroupKey = std::pair<uint64_t, uint64_t>;

inline SampleGroupKey goroutineKey(uint64_t pid, uint64_t goid) {
  return {pid, goid};
}
inline SampleGroupKey contextKey(std::optional<uint64_t> value) {
  return value ? SampleGroupKey{0, *value} : SampleGroupKey{1, 0};
}
// The value a contextKey stands for (nullopt: unknown).
inline std::optional<uint64_t> contextValueOf(const SampleGroupKey& key) {
  return key.first == 0 ? std::optional<uint64_t>(key.second) : std::nullopt;
}

struct SampleGroup {
  SampleGroupKey key;
  uint64_t samples = 0;
  double percent = 0;   // of all samples
  FlatProfile profile;  // of this group's samples
};

struct SampleGroups {
  uint64_t samples = 0;
  size_t total_groups = 0;          // groups with samples, kept or not
  std::vector<SampleGroup> groups;  // the first `limit` of them
};

// The samples that pass the trace's filters.
SampleGroups computeGoroutineGroups(Trace& trace, FrameGrouping grouping, size_t limit);
SampleGroups computeContextGroups(Trace& trace, const ContextTimeline& timeline,
                                  FrameGrouping grouping, size_t limit);

}  // namespace incise::analyzer
