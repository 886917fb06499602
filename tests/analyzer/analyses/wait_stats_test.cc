// WaitStatsBuilder on hand-built rows: Go mutex waits count their waiting
// and releasing goroutines per group, and rows without ids count none.
#include "analyzer/analyses/locks/wait_stats.h"

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

}  // namespace
}  // namespace incise::analyzer
