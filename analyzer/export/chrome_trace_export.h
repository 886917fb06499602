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
//  - CPU samples as thread-scoped instant events named by the leaf function;
//    their stacks are in the format's shared "stackFrames" dictionary (after
//    traceEvents): a tree of frames, each {name, category = module, parent},
//    so every distinct call path prefix is written once and a sample only
//    carries "sf": the id of its leaf node. chrome://tracing shows the stack
//    of a selected sample from it; Perfetto's JSON importer ignores
//    stackFrames and shows samples as instants named by their leaf.
// Timestamps are µs from the trace start, printed with exactly three
// decimals, so ns survive the round trip. There is no displayTimeUnit: older
// Perfetto importers read it as the unit of "ts".
//
// Events are written as they are produced (the switch and lock rows are
// materialised, as `incise sched` and `incise locks` do; samples stream).
// Memory beyond that: one stack-tree node per distinct call path prefix.
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
  uint64_t stack_frames = 0;  // nodes in stackFrames
};

ChromeTraceStats writeChromeTrace(Trace& trace, std::ostream& out);

// ns as µs with three decimals: 1234567 -> "1234.567".
std::string microsText(uint64_t ns);

}  // namespace incise::analyzer
