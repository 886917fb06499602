// TimeRange: a half-open stretch of trace time, [start, end).
//
//   TimeRange ran{.start = switch_in, .end = switch_out};
//   uint64_t ns = ran.end - ran.start;
#pragma once

#include <cstdint>

namespace incise::analyzer {

struct TimeRange {
  uint64_t start = 0, end = 0;
};

}  // namespace incise::analyzer
