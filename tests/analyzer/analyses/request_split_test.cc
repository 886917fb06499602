// splitRequests on hand-built traces whose schedule and context changes are
// known to the nanosecond: where each value's spans start and end (halfway
// between the reads that bound a change, at a thread's exit), its split
// over on-CPU, runnable, lock wait and blocked time, its page faults and
// threads, the order of the rows, and the error for an unknown context.
#include "analyzer/analyses/requests/request_split.h"

#include <gtest/gtest.h>

#include "analyzer/model/trace.h"
#include "format/event_kinds.h"
#include "tests/analyzer/reports/built_trace.h"
#include "tests/analyzer/reports/trace_builder.h"

namespace incise::analyzer {
namespace {
using testing::openBuiltTrace;
using testing::TraceBuilder;

constexpr uint64_t kMs = 1'000'000;

// Thread 101 serves request 7 from 1 ms to 11 ms (first read at 1 ms) on
// cpu 0: 1-3 running, 3-4 runnable (preempted by 102), 4-5 running, 5-8
// blocked on a mutex that 102 releases at 8, 8-9 running, 9-10 blocked in
// a sleep, 10-11 running, with two faults; then request 9 from 11 ms (last
// read of 7 at 10.5 ms, first of 9 at 11.5 ms) until the thread exits at
// 12 ms. Thread 102 serves request 9's other part from 3 to 4 ms (it runs
// then), and 0 (no request) after.
void buildRequests(TraceBuilder& t) {
  t.thread(101, "worker");
  t.thread(102, "helper");
  t.context("req", "request_id");
  t.context("other", "other_id");
  t.sched(0, 0, 0, 0, 101);
  t.contextChange(1 * kMs, 101, 0, 7);
  t.contextChange(1 * kMs, 101, 1, 5);  // another slot: not grouped by
  t.sched(3 * kMs, 0, 101, /*prev_state=*/0, 102);
  t.contextChange(3 * kMs, 102, 0, 9);
  t.contextChange(4 * kMs, 102, 0, 0, /*since=*/4 * kMs);
  t.sched(4 * kMs, 0, 102, 1, 101);
  t.sched(5 * kMs, 0, 101, 1, 0);
  t.lock(101, 0x7000, 5 * kMs, 8 * kMs, 8 * kMs + 500'000, t.stack({"update", "main"}),
         format::kLockContended, /*releaser_tid=*/102);
  t.wakeup(8 * kMs, 102, 101);
  t.sched(8 * kMs, 0, 0, 0, 101);
  t.fault(8 * kMs + 100, 101, 0x1000, 0);
  t.sched(9 * kMs, 0, 101, 1, 0);
  t.wakeup(10 * kMs, 0, 101);
  t.sched(10 * kMs, 0, 0, 0, 101);
  t.fault(10 * kMs + 100, 101, 0x2000, 0);
  t.contextChange(11 * kMs + 500'000, 101, 0, 9, /*since=*/10 * kMs + 500'000);
  t.fault(11 * kMs + 600'000, 101, 0x3000, 0);
  t.processEvent(12 * kMs, format::ProcessEventType::kExit, TraceBuilder::kPid, 101);
  t.sched(12 * kMs, 0, 101, 0x40, 0);
  t.setEnd(20 * kMs);
}

// splitRequests(name) on the trace buildRequests makes.
Result<RequestSplits> splitBuiltRequests(const std::string& name) {
  TraceBuilder t;
  buildRequests(t);
  auto trace = openBuiltTrace(t);
  if (!trace) return Error("no trace");
  return splitRequests(*trace, name);
}

TEST(RequestSplit, EachValueSplitOverItsThreadsStates) {
  Result<RequestSplits> split = splitBuiltRequests("req");
  ASSERT_TRUE(split) << split.error().message();
  EXPECT_EQ(split->name, "req");
  ASSERT_EQ(split->requests.size(), 2u);

  const RequestSplit& seven = split->requests[0];
  EXPECT_EQ(seven.value, 7u);
  EXPECT_EQ(seven.start, TraceBuilder::kStartNs + 1 * kMs);
  EXPECT_EQ(seven.end, TraceBuilder::kStartNs + 11 * kMs);
  EXPECT_EQ(seven.wall_ns, 10 * kMs);
  EXPECT_EQ(seven.on_cpu_ns, 5 * kMs);
  EXPECT_EQ(seven.runnable_ns, 1 * kMs);
  EXPECT_EQ(seven.lock_wait_ns, 3 * kMs);
  EXPECT_EQ(seven.blocked_ns, 1 * kMs);
  EXPECT_EQ(seven.unobserved_ns, 0u);
  EXPECT_EQ(seven.page_faults, 2u);
  EXPECT_EQ(seven.lock_releaser_tid, 102u);
  EXPECT_EQ(seven.threads, (std::vector<uint32_t>{101}));

  // 3-4 ms on 102 (running), 11-12 ms on 101 (running, one fault).
  const RequestSplit& nine = split->requests[1];
  EXPECT_EQ(nine.value, 9u);
  EXPECT_EQ(nine.wall_ns, 9 * kMs);
  EXPECT_EQ(nine.on_cpu_ns, 2 * kMs);
  EXPECT_EQ(nine.runnable_ns + nine.lock_wait_ns + nine.blocked_ns + nine.unobserved_ns, 0u);
  EXPECT_EQ(nine.page_faults, 1u);
  EXPECT_EQ(nine.threads, (std::vector<uint32_t>{101, 102}));
}

TEST(RequestSplit, AnotherSlotIsItsOwnContext) {
  Result<RequestSplits> split = splitBuiltRequests("other");
  ASSERT_TRUE(split) << split.error().message();
  ASSERT_EQ(split->requests.size(), 1u);
  EXPECT_EQ(split->requests[0].value, 5u);
  // From its read at 1 ms to the thread's exit at 12 ms.
  EXPECT_EQ(split->requests[0].wall_ns, 11 * kMs);
}

// A thread writes its own variable: a change is placed in the runs between
// the two reads that bound it, not in the time the thread waited for a cpu.
TEST(RequestSplit, AChangeFallsWhereItsThreadRan) {
  TraceBuilder t;
  t.thread(201, "worker");
  t.thread(202, "other");
  t.context("req", "request_id");
  // 201 runs 0-2 ms, waits for the cpu 2-8 ms (preempted by 202), runs 8-10 ms.
  t.sched(0, 0, 0, 0, 201);
  t.contextChange(0, 201, 0, 1);
  t.sched(2 * kMs, 0, 201, /*prev_state=*/0, 202);
  t.sched(8 * kMs, 0, 202, 1, 201);
  // Value 1 last read at 1.5 ms, value 2 first at 9 ms: 0.5 ms of run
  // before the preemption and 1 ms after; halfway through them is 8.25 ms.
  t.contextChange(9 * kMs, 201, 0, 2, /*since=*/1 * kMs + 500'000);
  t.sched(10 * kMs, 0, 201, 1, 0);
  t.setEnd(10 * kMs);
  auto trace = openBuiltTrace(t);
  ASSERT_TRUE(trace);
  Result<RequestSplits> split = splitRequests(*trace, "req");
  ASSERT_TRUE(split) << split.error().message();
  ASSERT_EQ(split->requests.size(), 2u);
  EXPECT_EQ(split->requests[0].value, 1u);
  EXPECT_EQ(split->requests[0].wall_ns, 8 * kMs + 250'000);
  EXPECT_EQ(split->requests[0].on_cpu_ns, 2 * kMs + 250'000);
  EXPECT_EQ(split->requests[0].runnable_ns, 6 * kMs);
  EXPECT_EQ(split->requests[1].value, 2u);
  EXPECT_EQ(split->requests[1].start, TraceBuilder::kStartNs + 8 * kMs + 250'000);
}

TEST(RequestSplit, AnUnknownContextNamesTheOnesThereAre) {
  Result<RequestSplits> split = splitBuiltRequests("conn");
  ASSERT_FALSE(split);
  EXPECT_NE(split.error().message().find("no context 'conn' (it has: req, other)"),
            std::string::npos)
      << split.error().message();
}

TEST(RequestSplit, ATraceWithoutContextsSaysHowToRecordThem) {
  TraceBuilder t;
  t.thread(101, "worker");
  t.sched(0, 0, 0, 0, 101);
  auto trace = openBuiltTrace(t);
  ASSERT_TRUE(trace);
  Result<RequestSplits> split = splitRequests(*trace, "req");
  ASSERT_FALSE(split);
  EXPECT_NE(split.error().message().find("--context req=SYMBOL"), std::string::npos)
      << split.error().message();
}

}  // namespace
}  // namespace incise::analyzer
