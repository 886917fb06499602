// WaitStatsBuilder on hand-built rows: Go mutex waits count their waiting
// and releasing goroutines per group, and rows without ids count none.
#include "analyzer/analyses/locks/wait_stats.h"

#include "analyzer/analyses/locks/wait_summary_row.h"

#include <gtest/gtest.h>

namespace incise::analyzer {
namespace {

format::LockInterval goWait(uint64_t start, uint64_t ns, uint64_t goid, uint64_t releaser_goid) {
  return {.time = start,
          .acquired_time = start + ns,
          .pid = 100,
          .tid = 101,
          .address = 0xc000014210,
          .lock_kind = static_cast<uint64_t>(format::LockKind::kMutex),
          .flags = format::kLockContended | format::kLockContendedOnly,
          .releaser_tid = 101,
          .goid = goid,
          .releaser_goid = releaser_goid};
}

WaitClass mutexWait(const format::LockInterval& row) {
  WaitClass c;
  c.kind = WaitKind::kMutex;
  c.object = row.address;
  c.holder_tid = row.releaser_tid;
  c.holder_source = HoldSource::kExact;
  return c;
}

TEST(WaitStats, GoMutexWaitsCountTheirGoroutines) {
  WaitStatsBuilder builder(WaitGrouping::kByObject, {});
  for (const format::LockInterval& row :
       {goWait(1000, 50, 18, 19), goWait(2000, 70, 18, 20), goWait(3000, 30, 19, 18)})
    builder.add(row, mutexWait(row));
  std::vector<WaitGroupStats> groups = builder.finish(1);
  ASSERT_EQ(groups.size(), 1u);
  const WaitGroupStats& g = groups.front();
  EXPECT_EQ(g.goroutines_waiting, 2u);
  EXPECT_EQ(g.goroutines_releasing, 3u);
  ASSERT_EQ(g.goroutine_waiters.size(), 1u);  // the top one only
  EXPECT_EQ(g.goroutine_waiters[0].goid, 18u);
  EXPECT_EQ(g.goroutine_waiters[0].waits, 2u);
  EXPECT_EQ(g.goroutine_waiters[0].ns, 120u);
  ASSERT_EQ(g.goroutine_releasers.size(), 1u);
  // One wait each: the longer wait ranks first.
  EXPECT_EQ(g.goroutine_releasers[0].goid, 20u);
}

TEST(WaitStats, RowsWithoutGoroutineIdsCountNone) {
  WaitStatsBuilder builder(WaitGrouping::kByObject, {});
  format::LockInterval row = goWait(1000, 50, 0, 0);
  builder.add(row, mutexWait(row));
  std::vector<WaitGroupStats> groups = builder.finish(3);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups.front().goroutines_waiting, 0u);
  EXPECT_TRUE(groups.front().goroutine_waiters.empty());
  EXPECT_TRUE(groups.front().goroutine_releasers.empty());
}

// A recorder's summary of short semaphore waits counts as its waits, with the
// poster it names, beside the same semaphore's written rows.
TEST(WaitStats, SummariesCountAsTheirWaits) {
  constexpr uint64_t kSem = 0x7f0000002000;
  format::WaitSummary summary{.time = 1000,
                              .end_time = 9000,
                              .pid = 100,
                              .tid = 101,
                              .address = kSem,
                              .object = static_cast<uint64_t>(format::WaitObject::kSemaphore),
                              .stack_id = 3,
                              .releaser_tid = 102,
                              .releaser_stack_id = 4,
                              .bucket = 6,
                              .count = 4,
                              .total_ns = 400,
                              .max_ns = 120};
  format::LockInterval shared = waitRowOf(summary);
  EXPECT_EQ(shared.time, 1000u);
  EXPECT_EQ(shared.acquired_time, 9000u);
  EXPECT_TRUE(isWait(shared));
  WaitClass wait = classifyWait(shared, WaitFrames{});
  EXPECT_EQ(wait.kind, WaitKind::kSemaphore);
  EXPECT_EQ(wait.object, kSem);
  EXPECT_EQ(wait.holder_tid, 102u);

  WaitStatsBuilder builder(WaitGrouping::kByObject, {});
  builder.add(summary, wait);
  format::LockInterval long_wait = shared;
  long_wait.time = 20000;
  long_wait.acquired_time = 20000 + 5000;
  long_wait.releaser_tid = 103;
  builder.add(long_wait, classifyWait(long_wait, WaitFrames{}));
  std::vector<WaitGroupStats> groups = builder.finish(3);
  ASSERT_EQ(groups.size(), 1u);
  const WaitGroupStats& g = groups.front();
  EXPECT_EQ(g.kind, WaitKind::kSemaphore);
  EXPECT_EQ(g.wait.count, 5u);
  EXPECT_EQ(g.wait.total, 5400u);
  EXPECT_EQ(g.wait.max, 5000u);
  ASSERT_EQ(g.top_waiters.size(), 1u);
  EXPECT_EQ(g.top_waiters[0].count, 5u);
  ASSERT_EQ(g.top_named.size(), 2u);
  EXPECT_EQ(g.top_named[0].tid, 103u);  // by wait time
  EXPECT_EQ(g.top_named[1].tid, 102u);
  EXPECT_EQ(g.top_named[1].waits, 4u);
  std::vector<WaitKindTotals> kinds = builder.kinds();
  ASSERT_EQ(kinds.size(), 1u);
  EXPECT_EQ(kinds[0].wait.count, 5u);
}

}  // namespace
}  // namespace incise::analyzer
