// Requests: where each value of a context (--context NAME=SYMBOL, such as
// a request id) spent its time. A thread holds a value over the stretches
// of the context's timeline (model/context_timeline.h: from where its
// change is placed until the thread's next change, its exit or the end of
// the trace). Value 0 is no request: its time is left out.
//
// Each of a value's spans (one per thread and stretch) is split over its
// thread's states (splitThreadSpans: on-CPU, runnable, lock wait, blocked,
// unobserved); a request's row sums them, counts the page faults in them,
// and spans from its first span's start to its last one's end (wall).
//
// Memory: the context's timeline (one point per value and thread), the
// spans, and what splitThreadSpans keeps;
// the schedule is replayed twice (once for the timeline).
//
//   Result<RequestSplits> split = splitRequests(trace, "req");
//   split->requests[0].value, split->requests[0].wall_ns, split->requests[0].lock_wait_ns;
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/analyses/sched/thread_span_split.h"
#include "analyzer/model/context_value_text.h"
#include "base/status.h"

namespace incise::analyzer {

class Trace;

// Its spans' times summed (the ThreadSpanSplit part); lock_releaser_tid is
// the thread whose releases ended most of its lock wait (lock_address: 0).
struct RequestSplit : ThreadSpanSplit {
  uint64_t value = 0;
  uint64_t start = 0;  // trace time: the first span's start
  uint64_t end = 0;    // the last span's end
  uint64_t wall_ns = 0;
  uint64_t page_faults = 0;
  std::vector<uint32_t> threads;  // tids, ascending
};

struct RequestSplits {
  std::string name;                    // the context's NAME
  std::vector<RequestSplit> requests;  // slowest (wall) first; ties: the smaller value
  ContextValueText values;             // how the context's values are written
};

// An Error when the trace has no context `name` (it names the ones it has).
Result<RequestSplits> splitRequests(Trace& trace, std::string_view name);

}  // namespace incise::analyzer
