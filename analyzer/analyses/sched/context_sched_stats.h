// Thread states held to context values: what `incise sched --where` and
// `--by context:NAME` print. Each thread's running, runnable and blocked
// time (ThreadStateMachine's StateSpans) is cut where its context values
// change, and each piece is charged to the value its thread held there
// (the --by timeline's; unknown without one) when the --where conditions
// hold; switches, migrations and wake-ups go to the value held at their
// row. A thread changes its context only while it runs, so a switch-out,
// the off-CPU time after it and the switch-in that ends it share one value.
// Short blocks the recorder counted (--sched-min-block) go to the value at
// their first block, as the --where filter keeps them.
//
// Memory: the machine's and one ThreadSchedStats per thread and value.
//
//   ThreadStateMachine machine(RecordedThreads::of(trace));
//   ContextSchedStats split = replayScheduleByContext(trace, machine, &req_timeline);
//   for (const auto& [key, stats] : split) ... key.tid, contextValueOf(key.group), stats.running_ns
#pragma once

#include <cstdint>
#include <map>
#include <tuple>

#include "analyzer/analyses/profile/sample_groups.h"
#include "analyzer/analyses/sched/thread_states.h"
#include "analyzer/model/context_timeline.h"

namespace incise::analyzer {

class Trace;

struct ContextSchedKey {
  uint32_t tid = 0;
  SampleGroupKey group;  // contextKey of the --by value; contextKey(nullopt) without one
  bool operator<(const ContextSchedKey& other) const {
    return std::tie(tid, group) < std::tie(other.tid, other.group);
  }
};

// first_time is the first piece or event charged; exit_time and the
// runqueue_* figures stay 0 (`incise offcpu` has the runqueue waits).
using ContextSchedStats = std::map<ContextSchedKey, ThreadSchedStats>;

// Replays the trace's schedule (and its block summaries) through `machine`
// from the trace's window start to its end, finishing it, and returns the
// pieces that pass trace.passesContext, by thread and value of `by` (null: one group).
ContextSchedStats replayScheduleByContext(Trace& trace, ThreadStateMachine& machine,
                                          const ContextTimeline* by);

}  // namespace incise::analyzer
