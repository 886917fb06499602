// streamLockRows: a trace's lock rows (those passing its filter) through a
// LockRowStream, in time order, without holding them.
//
// The one place that feeds a trace to LockRowStream: the stream settles
// contended-mode holders as time passes, so it must see rows in request-time
// order (TimeOrderedRows), never file order. Memory is what LockRowStream
// keeps (per lock and per wait in progress) and the chunks overlapping the
// merge time.
//
// `admit`, when given, sees each row first and may change it (a lock's
// address becomes its object's) or keep it out of the stream (a wait that
// is not on a lock): incise locks passes only lock kinds (wait_kind.h).
//
//   LockRowCounts counts = streamLockRows(trace, {.section = [&](const CriticalSection& s) {
//     hold += s.duration();
//   }});
#pragma once

#include <functional>

#include "analyzer/analyses/locks/critical_sections.h"
#include "analyzer/model/trace.h"

namespace incise::analyzer {

// Whether a row goes on into the stream; it may rewrite the row.
using LockRowAdmit = std::function<bool(format::LockInterval& row)>;

// Hands every acquisition, section and wait to `sinks`; returns the counts.
LockRowCounts streamLockRows(Trace& trace, LockRowSinks sinks, const LockRowAdmit& admit = {});

}  // namespace incise::analyzer
