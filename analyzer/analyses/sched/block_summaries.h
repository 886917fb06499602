// forEachBlockSummary: the short off-CPU intervals the recorder counted
// instead of writing their switch and wake-up rows (--sched-min-block, block
// summary rows), as the reports that charge off-CPU time read them.
//
// A summary counts one thread's blocks of one state and off-CPU stack over
// [time, end_time] (at most a second of the recording). Cut by a --time
// window, it is prorated to the part inside: its count, time and wake-ups
// scaled by the overlap, so a window's figures are exact to that resolution.
//
//   machine.finish(end);
//   forEachBlockSummary(trace, [&](const format::BlockSummary& s) { machine.addBlockSummary(s); });
#pragma once

#include <functional>

#include "format/event_kinds.h"

namespace incise::analyzer {

class Trace;

void forEachBlockSummary(Trace& trace,
                         const std::function<void(const format::BlockSummary&)>& visit);

}  // namespace incise::analyzer
