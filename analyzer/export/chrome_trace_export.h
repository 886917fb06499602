// Chrome Trace Event export (the JSON that chrome://tracing and
// ui.perfetto.dev open): a timeline per thread.
//
//  - one track per thread (pid/tid, named by process_name/thread_name
//    metadata events; a thread the trace never named is called "tid N")
//    holding its scheduler states as complete ("X") slices: running,
//    runnable, blocked — the spans `incise sched` adds up, of the threads the
//    recorder followed (bystanders only with ChromeTraceOptions::bystanders).
//    Adjacent slices meet exactly in float64 (see chromeTime);
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
//    stackFrames and shows samples as instants named by their leaf. Samples
//    of the idle task (tid 0) are left out: idle has no thread track;
//  - "otherData": the source, the events the recorder lost and the switches
//    the replay could not reconcile (ScheduleConsistency), so a gap in a
//    track says why.
// Timestamps are µs from the trace start on a grid of 1/1024 µs (chromeTime):
// there every time is exactly a double, so ts + dur, and any difference a
// viewer takes (speedscope subtracts each thread's first ts), are exact and
// adjacent slices meet; three-decimal µs are not doubles, and their sums
// overran the next slice by float noise. A step is 0.977 ns, so ns survive
// the round trip: round(ts * 1000). There is no displayTimeUnit: older
// Perfetto importers read it as the unit of "ts".
//
// Events are written as they are produced (switches, wake-ups and lock rows
// stream in time order; samples in file order). Memory beyond that: one
// stack-tree node per distinct call path prefix.
//
//   ChromeTraceStats stats = writeChromeTrace(trace, out);
#pragma once

#include <cstdint>
#include <ostream>

#include "analyzer/analyses/sched/thread_states.h"
#include "analyzer/model/trace.h"

namespace incise::analyzer {

struct ChromeTraceOptions {
  bool bystanders = false;  // also draw what was seen of threads the recorder did not follow
};

struct ChromeTraceStats {
  uint64_t state_slices = 0;
  uint64_t lock_slices = 0;
  uint64_t samples = 0;
  uint64_t idle_samples = 0;  // samples of the idle task, left out
  uint64_t threads = 0;
  uint64_t stack_frames = 0;  // nodes in stackFrames
  ScheduleConsistency schedule;
};

ChromeTraceStats writeChromeTrace(Trace& trace, std::ostream& out,
                                  const ChromeTraceOptions& options = {});

// Chrome times: ns rounded to 1/1024 µs steps, and those steps as µs text,
// the shortest that parses back to the same double:
//   chromeTime(1234567) == 1264197, chromeTimeText(1264197) == "1234.5673828125".
inline constexpr uint64_t kChromeTimeUnitsPerMicro = 1024;
uint64_t chromeTime(uint64_t ns);
std::string chromeTimeText(uint64_t units);

}  // namespace incise::analyzer
