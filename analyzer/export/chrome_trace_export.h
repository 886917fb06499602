// Chrome Trace Event export (the JSON that chrome://tracing and
// ui.perfetto.dev open): a timeline per thread.
//
//  - one track per thread (pid/tid, named by process_name/thread_name
//    metadata events) holding its scheduler states as complete ("X") slices:
//    running, runnable, blocked (the same spans `incise sched` adds up);
//  - lock waits and critical sections as async slices ("b"/"e", category
//    "lock", named "wait 0xADDR" / "hold 0xADDR"; inferred holds say so in
//    args): they overlap the state slices without nesting, which thread
//    slices must, so they cannot share the state track;
//  - CPU samples as thread-scoped instant events named by the leaf function,
//    with the whole stack (leaf first) in args.stack.
// Timestamps are µs from the trace start, printed with exactly three
// decimals, so ns survive the round trip.
//
// Events are written as they are produced (the switch and lock rows are
// materialised, as `incise sched` and `incise locks` do; samples stream).
//
//   ChromeTraceStats stats = writeChromeTrace(trace, out);
#pragma once

#include <cstdint>
#include <ostream>

#include "analyzer/model/trace.h"

namespace incise::analyzer {

struct ChromeTraceStats {
  uint64_t state_slices = 0;
  uint64_t lock_slices = 0;
  uint64_t samples = 0;
  uint64_t threads = 0;
};

ChromeTraceStats writeChromeTrace(Trace& trace, std::ostream& out);

// ns as µs with three decimals: 1234567 -> "1234.567".
std::string microsText(uint64_t ns);

}  // namespace incise::analyzer
