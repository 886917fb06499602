// Where a slow call's time went: the slowest timed calls of a trace (latency
// rows: --trace, --syscalls, --block-io, --io-uring), each split over its
// thread's states from entry to return.
//
//   on-CPU      the thread ran (switch-in to switch-out);
//   runnable    it waited in a runqueue (preempted, or woken and not yet run);
//   lock wait   it was blocked waiting for a lock (mutex, rwlock, spin; the
//               wait kinds `incise locks` lists), with the thread that
//               released the lock to it;
//   blocked     blocked otherwise (I/O, sleep, condvar, semaphore, join...);
//   unobserved  the rest: the call began before its thread's first scheduler
//               event, the scheduler was not recorded (--no-sched), or the
//               --time window ends inside the call.
// The five add up to the call's duration exactly.
//
// The states come from ThreadStateMachine (thread_states.h), so a thread's
// state between events is what `incise sched` charges it. Short blocks the
// recorder counted instead of writing (--sched-min-block) have no times: the
// replay reads them as running, so a call whose thread has a block summary
// overlapping it is marked `short_blocks_summarized` (its on-CPU may include
// them; --sched-min-block 0 records every block).
//
// Memory: the `count` slowest calls, their blocked intervals, and what a
// schedule replay and a lock row stream keep; three passes over the file
// (latency rows, the schedule, lock rows).
//
//   std::vector<SlowCallSplit> calls = splitSlowCalls(trace, 10);
//   calls[0].duration_ns, calls[0].on_cpu_ns, calls[0].lock_wait_ns, calls[0].lock_releaser_tid;
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace incise::analyzer {

class Trace;

struct SlowCallSplit {
  // The call, as its latency row has it.
  uint64_t source = 0;  // format::LatencySource
  uint64_t probe = 0;
  uint64_t detail = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t start = 0;  // trace time of the entry
  uint64_t duration_ns = 0;
  uint64_t stack_id = 0;
  // Its time, by state; the five add up to duration_ns.
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

// The `count` slowest calls passing the trace's filter (ties: the earlier
// first), slowest first, each split as above.
std::vector<SlowCallSplit> splitSlowCalls(Trace& trace, size_t count);

}  // namespace incise::analyzer
