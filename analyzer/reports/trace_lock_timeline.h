// readLockTimeline: a trace's lock rows (those passing its filter) turned
// into critical sections and waits, without holding the rows.
//
// The rows stream in time order (TimeOrderedRows), exactly the order
// buildLockTimeline expects, so the result is the same; memory is one record
// per critical section (72 bytes) and per lock wait (64 bytes), plus one per
// acquisition (64 bytes) when `keep_acquisitions` (lock statistics need them).
//
//   LockTimeline timeline = readLockTimeline(trace, /*keep_acquisitions=*/false);
//   for (const LockWait& w : timeline.waits) ...
#pragma once

#include "analyzer/model/trace.h"
#include "analyzer/reports/critical_sections.h"

namespace incise::analyzer {

LockTimeline readLockTimeline(Trace& trace, bool keep_acquisitions);

}  // namespace incise::analyzer
