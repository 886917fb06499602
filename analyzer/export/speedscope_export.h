// speedscope export (https://www.speedscope.app file format): one sampled
// profile per thread, samples in time order (so speedscope's "Time Order"
// view is a timeline), frames shared by name across threads. It opens on
// the busiest thread (activeProfileIndex: the most weight).
//
// Stacks are root first, indexes into shared.frames; a sample of a Go
// program's goroutine starts with a "[goroutine N]" frame (speedscope has no
// per-sample fields: the Chrome export's args.goroutine). Weights are the
// samples' periods in ns when the trace sampled cpu-clock (unit
// "nanoseconds"), else 1 per sample (unit "none").
//
// Streamed: while the samples are read, each distinct stack is named and
// rendered once ("[0,4,9]") and a sample is kept as 24 bytes (time, weight,
// stack index); then each thread's profile is sorted, written and freed, and
// the frames table is written last (JSON objects are unordered). So memory
// is the distinct stacks and frames plus 24 bytes per sample, not a JSON
// document of the whole profile.
//
//   writeSpeedscope(trace, out);
#pragma once

#include <ostream>

#include "analyzer/model/trace.h"

namespace incise::analyzer {

struct SpeedscopeStats {
  uint64_t profiles = 0;  // threads
  uint64_t samples = 0;
  uint64_t frames = 0;
};

SpeedscopeStats writeSpeedscope(Trace& trace, std::ostream& out);

}  // namespace incise::analyzer
