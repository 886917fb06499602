// The summary rows of a trace as the reports read them: the short off-CPU
// intervals (block summaries) and the short condvar and semaphore waits
// (wait summaries) the recorder counted instead of writing their rows
// (--sched-min-block). Each passes the trace's filter, and one cut by a
// --time window is prorated to the part inside (summary_window.h).
//
// A block summary counts one thread's blocks of one state and off-CPU stack
// over [time, end_time]; a wait summary one thread's waits on one futex word
// from one stack, woken by one thread from one stack, in one log2 bucket of
// wait time.
//
//   machine.finish(end);
//   forEachBlockSummary(trace, [&](const format::BlockSummary& s) { machine.addBlockSummary(s); });
//   forEachWaitSummary(trace, [&](const format::WaitSummary& s) { stats.add(s, wait); });
#pragma once

#include <functional>

#include "format/event_kinds.h"

namespace incise::analyzer {

class Trace;

void forEachBlockSummary(Trace& trace,
                         const std::function<void(const format::BlockSummary&)>& visit);
void forEachWaitSummary(Trace& trace, const std::function<void(const format::WaitSummary&)>& visit);

}  // namespace incise::analyzer
