// streamLockRows: a trace's lock rows (those passing its filter) through a
// LockRowStream, in time order, without holding them.
//
// The one place that feeds a trace to LockRowStream: the stream settles
// contended-mode holders as time passes, so it must see rows in request-time
// order (TimeOrderedRows), never file order. Memory is what LockRowStream
// keeps (per lock and per wait in progress) and the chunks overlapping the
// merge time.
//
//   LockRowCounts counts = streamLockRows(trace, {.section = [&](const CriticalSection& s) {
//     hold += s.duration();
//   }});
#pragma once

#include "analyzer/model/trace.h"
#include "analyzer/reports/critical_sections.h"

namespace incise::analyzer {

// Hands every acquisition, section and wait to `sinks`; returns the counts.
LockRowCounts streamLockRows(Trace& trace, LockRowSinks sinks);

}  // namespace incise::analyzer
