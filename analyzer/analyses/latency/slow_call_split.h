// Where a slow call's time went: the slowest timed calls of a trace (latency
// rows: --trace, --syscalls, --block-io, --io-uring), each split over its
// thread's states from entry to return.
//
// The split is splitThreadSpans' (analyses/sched/thread_span_split.h):
// on-CPU, runnable, lock wait, blocked and unobserved, adding up to the
// call's duration exactly.
//
// Memory: the `count` slowest calls and what splitThreadSpans keeps; three
// passes over the file (latency rows, the schedule, lock rows).
//
//   std::vector<SlowCallSplit> calls = splitSlowCalls(trace, 10);
//   calls[0].duration_ns, calls[0].on_cpu_ns, calls[0].lock_wait_ns, calls[0].lock_releaser_tid;
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "analyzer/analyses/sched/thread_span_split.h"

namespace incise::analyzer {

class Trace;

// Its time, by state (the ThreadSpanSplit part), adds up to duration_ns.
struct SlowCallSplit : ThreadSpanSplit {
  // The call, as its latency row has it.
  uint64_t source = 0;  // format::LatencySource
  uint64_t probe = 0;
  uint64_t detail = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t start = 0;  // trace time of the entry
  uint64_t duration_ns = 0;
  uint64_t stack_id = 0;
};

// The `count` slowest calls passing the trace's filter (ties: the earlier
// first), slowest first, each split as above.
std::vector<SlowCallSplit> splitSlowCalls(Trace& trace, size_t count);

}  // namespace incise::analyzer
