// Where a thread's time went over given spans of it (a timed call, a
// request): each span split over its thread's states.
//
//   on-CPU      the thread ran (switch-in to switch-out);
//   runnable    it waited in a runqueue (preempted, or woken and not yet run);
//   lock wait   it was blocked waiting for a lock (mutex, rwlock, spin; the
//               wait kinds `incise locks` lists), with the thread that
//               released the lock to it;
//   blocked     blocked otherwise (I/O, sleep, condvar, semaphore, join...);
//   unobserved  the rest: the span began before its thread's first scheduler
//               event, the scheduler was not recorded (--no-sched), or the
//               --time window ends inside it.
// The five add up to the span's length exactly.
//
// The states come from ThreadStateMachine (thread_states.h), so a thread's
// state between events is what `incise sched` charges it. Short blocks the
// recorder counted instead of writing (--sched-min-block) have no times: the
// replay reads them as running, so a span whose thread has a block summary
// overlapping it is marked `short_blocks_summarized` (its on-CPU may include
// them; --sched-min-block 0 records every block).
//
// Memory: the spans, their blocked intervals, and what a schedule replay
// and a lock row stream keep; two passes over the file (the schedule, lock
// rows).
//
//   std::vector<ThreadSpanSplit> split = splitThreadSpans(trace, {{.tid = 43, .start = t0, .end =
//   t1}}); split[0].on_cpu_ns, split[0].lock_wait_ns, split[0].lock_releaser_tid;
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/model/time_range.h"

namespace incise::analyzer {

class Trace;

struct ThreadSpan {
  uint32_t tid = 0;
  uint64_t start = 0;  // trace time
  uint64_t end = 0;
};

struct ThreadSpanSplit {
  // The span's time by state; the five add up to end - start.
  uint64_t on_cpu_ns = 0;
  uint64_t runnable_ns = 0;
  uint64_t lock_wait_ns = 0;
  uint64_t blocked_ns = 0;  // blocked, not on a lock
  uint64_t unobserved_ns = 0;
  // The thread whose release ended most of the lock wait (0: none known),
  // and that lock's address.
  uint64_t lock_releaser_tid = 0;
  uint64_t lock_address = 0;
  bool short_blocks_summarized = false;
};

// Each span's on-CPU pieces, in time order: where its thread ran inside it.
std::vector<std::vector<TimeRange>> onCpuPieces(Trace& trace, const std::vector<ThreadSpan>& spans);

// Adds `split`'s times (not its releaser) into `into`: the split of spans
// taken together. A summary of short blocks in either marks the sum.
void addSpanTimes(ThreadSpanSplit& into, const ThreadSpanSplit& split);

// One split per span, in the spans' order. Spans of one thread may be many;
// they should not overlap (each would be charged the shared time).
std::vector<ThreadSpanSplit> splitThreadSpans(Trace& trace, const std::vector<ThreadSpan>& spans);

}  // namespace incise::analyzer
