// speedscope export (https://www.speedscope.app file format): one sampled
// profile per thread, samples in time order (so speedscope's "Time Order"
// view is a timeline), frames shared by name across threads.
//
// Stacks are root first, indexes into shared.frames. Weights are the
// samples' periods in ns when the trace sampled cpu-clock (unit
// "nanoseconds"), else 1 per sample (unit "none").
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
