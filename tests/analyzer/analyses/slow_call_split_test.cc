// splitSlowCalls on hand-built traces whose schedule is known to the
// nanosecond: a slow call's on-CPU, runnable, lock wait and other blocked
// time, the releaser of its lock, and what no scheduler event covers.
#include "analyzer/analyses/latency/slow_call_split.h"

#include <gtest/gtest.h>

#include "analyzer/model/trace.h"
#include "format/event_kinds.h"
#include "tests/analyzer/reports/built_trace.h"
#include "tests/analyzer/reports/trace_builder.h"

namespace incise::analyzer {
namespace {
using format::LatencySource;
using testing::openBuiltTrace;
using testing::TraceBuilder;

constexpr uint64_t kMs = 1'000'000;

// Thread 101's call runs from 1 ms to 11 ms on cpu 0:
//   1-3 running, 3-4 runnable (preempted by 102), 4-5 running,
//   5-8 blocked on a mutex that 102 releases at 8, 8-9 running,
//   9-10 blocked in a sleep, 10-11 running.
void buildSchedule(TraceBuilder& t) {
  t.thread(101, "worker");
  t.thread(102, "holder");
  t.thread(103, "quiet");
  t.latencyProbe(LatencySource::kFunction, 1, "handle");
  t.sched(0, 0, 0, 0, 101);
  t.sched(3 * kMs, 0, 101, /*prev_state=*/0, 102);
  t.sched(4 * kMs, 0, 102, 1, 101);
  t.sched(5 * kMs, 0, 101, 1, 0);
  t.lock(101, 0x7000, 5 * kMs, 8 * kMs, 8 * kMs + 500'000, t.stack({"update", "main"}),
         format::kLockContended, /*releaser_tid=*/102);
  t.wakeup(8 * kMs, 102, 101);
  t.sched(8 * kMs, 0, 0, 0, 101);
  t.sched(9 * kMs, 0, 101, 1, 0);
  t.wakeup(10 * kMs, 0, 101);
  t.sched(10 * kMs, 0, 0, 0, 101);
  t.sched(12 * kMs, 0, 101, 1, 0);
  t.latency(1 * kMs, 101, LatencySource::kFunction, 1, 10 * kMs);
  t.latency(11 * kMs + 100, 101, LatencySource::kFunction, 1, 100'000);  // fast: not kept
  t.setEnd(20 * kMs);
}

TEST(SlowCallSplit, StatesAddUpToTheCallAndNameTheReleaser) {
  TraceBuilder t;
  buildSchedule(t);
  auto trace = openBuiltTrace(t);
  ASSERT_TRUE(trace);
  std::vector<SlowCallSplit> calls = splitSlowCalls(*trace, 1);
  ASSERT_EQ(calls.size(), 1u);
  const SlowCallSplit& call = calls[0];
  EXPECT_EQ(call.tid, 101u);
  EXPECT_EQ(call.duration_ns, 10 * kMs);
  EXPECT_EQ(call.on_cpu_ns, 5 * kMs);
  EXPECT_EQ(call.runnable_ns, 1 * kMs);
  EXPECT_EQ(call.lock_wait_ns, 3 * kMs);
  EXPECT_EQ(call.blocked_ns, 1 * kMs);
  EXPECT_EQ(call.unobserved_ns, 0u);
  EXPECT_EQ(call.lock_releaser_tid, 102u);
  EXPECT_EQ(call.lock_address, 0x7000u);
  EXPECT_FALSE(call.short_blocks_summarized);
}

TEST(SlowCallSplit, SlowestFirstAndUnscheduledTimeIsUnobserved) {
  TraceBuilder t;
  buildSchedule(t);
  // Thread 103 has no scheduler event: nothing of its 4 ms call is known.
  t.latency(13 * kMs, 103, LatencySource::kFunction, 1, 4 * kMs);
  auto trace = openBuiltTrace(t);
  ASSERT_TRUE(trace);
  std::vector<SlowCallSplit> calls = splitSlowCalls(*trace, 5);
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].duration_ns, 10 * kMs);
  EXPECT_EQ(calls[1].tid, 103u);
  EXPECT_EQ(calls[1].unobserved_ns, 4 * kMs);
  EXPECT_EQ(calls[1].on_cpu_ns + calls[1].runnable_ns + calls[1].blocked_ns, 0u);
  // The fast call ran from 11 ms + 100 ns, inside the run that ends at 12 ms.
  EXPECT_EQ(calls[2].duration_ns, 100'000u);
  EXPECT_EQ(calls[2].on_cpu_ns, 100'000u);
  EXPECT_TRUE(splitSlowCalls(*trace, 0).empty());
}

TEST(SlowCallSplit, AWaitOnACondvarIsBlockedNotALockWait) {
  TraceBuilder t;
  t.thread(101, "worker");
  t.thread(102, "signaller");
  t.latencyProbe(LatencySource::kFunction, 1, "handle");
  t.sched(0, 0, 0, 0, 101);
  t.sched(2 * kMs, 0, 101, 1, 0);
  // A futex wait entered through pthread_cond_wait: WaitClassifier's condvar.
  t.function("pthread_cond_wait", "libc.so.6");
  t.setLockMode("contended");
  t.lock(101, 0x8000, 2 * kMs, 6 * kMs, 0, t.stack({"pthread_cond_wait", "wait_for_work", "main"}),
         format::kLockContendedOnly, 102, format::LockKind::kFutex);
  t.wakeup(6 * kMs, 102, 101);
  t.sched(6 * kMs, 0, 0, 0, 101);
  t.sched(9 * kMs, 0, 101, 1, 0);
  t.latency(1 * kMs, 101, LatencySource::kFunction, 1, 7 * kMs);
  t.setEnd(10 * kMs);
  auto trace = openBuiltTrace(t);
  ASSERT_TRUE(trace);
  std::vector<SlowCallSplit> calls = splitSlowCalls(*trace, 1);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].on_cpu_ns, 3 * kMs);
  EXPECT_EQ(calls[0].blocked_ns, 4 * kMs);
  EXPECT_EQ(calls[0].lock_wait_ns, 0u);
  EXPECT_EQ(calls[0].lock_releaser_tid, 0u);
}

}  // namespace
}  // namespace incise::analyzer
