// Thread state spans — running, runnable, blocked — as intervals, for
// timeline exports.
//
// The intervals are read off the same ThreadStateMachine `incise sched`
// uses: after each switch or wake-up (fed in replaySchedule's order, wake-ups
// first on a tie) the state totals of the threads it touched are compared
// with their totals before, and each increase is a span that ends at that
// event. finish() closes what is still open at `end`. So per thread the
// spans add up to exactly the sched report's running/runnable/blocked times.
// Zero-length spans are not reported.
//
//   replayStateSpans(switches, wakeups, trace.endTime(), [&](const StateSpan& s) {
//     emit(s.tid, threadStateName(s.state), s.start, s.end);
//   });
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "analyzer/reports/thread_states.h"
#include "format/event_kinds.h"

namespace incise::analyzer {

enum class ThreadState { kRunning, kRunnable, kBlocked };
std::string_view threadStateName(ThreadState state);  // "running", "runnable", "blocked"

struct StateSpan {
  uint32_t pid = 0;
  uint32_t tid = 0;
  ThreadState state = ThreadState::kRunning;
  uint64_t start = 0;
  uint64_t end = 0;
};

// Both lists sorted by time. `machine` is left finished, for its per-thread stats.
void replayStateSpans(const std::vector<format::SchedSwitch>& switches,
                      const std::vector<format::Wakeup>& wakeups, uint64_t end,
                      const std::function<void(const StateSpan&)>& visit,
                      ThreadStateMachine& machine);
// The same over the trace's switches and wake-ups, streamed in time order.
void replayStateSpans(Trace& trace, uint64_t end,
                      const std::function<void(const StateSpan&)>& visit,
                      ThreadStateMachine& machine);

}  // namespace incise::analyzer
