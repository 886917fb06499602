// Goroutine profile (what `incise top --by goroutine` prints): CPU samples
// per goroutine of each Go process, each with its own flat profile.
//
// A sample's goroutine is the one its thread was running (format 2.4, read
// by the recorder from the thread's current g); goroutine 0 stands for
// samples outside any goroutine (the runtime's scheduler and system stacks,
// and every thread of a program that is not Go). Goroutines are per
// process: a group is (pid, goid). Sorted by samples, most first.
//
//   GoroutineProfile profile = computeGoroutineProfile(trace, FrameGrouping::kFunction);
//   for (const GoroutineRow& g : profile.rows) print(g.pid, g.goid, g.samples, g.profile.rows[0]);
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/analyses/profile/flat_profile.h"
#include "analyzer/model/stack_namer.h"

namespace incise::analyzer {

class Trace;

struct GoroutineRow {
  uint64_t pid = 0;
  uint64_t goid = 0;  // 0: no goroutine
  uint64_t samples = 0;
  double percent = 0;   // of all samples
  FlatProfile profile;  // of this goroutine's samples
};

struct GoroutineProfile {
  uint64_t samples = 0;
  std::vector<GoroutineRow> rows;
};

// The samples that pass the trace's filters.
GoroutineProfile computeGoroutineProfile(Trace& trace, FrameGrouping grouping);

}  // namespace incise::analyzer
