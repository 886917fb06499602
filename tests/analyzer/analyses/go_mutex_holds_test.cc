// Known answers for Go mutex holds while others waited (go_mutex_holds.h):
// lockSlow rows and slow unlocks, merged by time as streamLockRows merges
// them, through LockRowStream into sections and lock statistics.
#include <gtest/gtest.h>

#include <algorithm>
#include <variant>
#include <vector>

#include "analyzer/analyses/locks/critical_sections.h"
#include "analyzer/analyses/locks/lock_stats.h"

namespace incise::analyzer {
namespace {

constexpr uint64_t kPid = 100;
constexpr uint64_t kMutex = 0xc000010000;
constexpr uint64_t kAcquireStack = 7;
constexpr uint64_t kReleaseStack = 9;

using Row = std::variant<format::LockInterval, format::LockRelease>;

// A contended Lock: lockSlow entered at `entry`, returned at `acquired`.
Row lockSlow(uint64_t goid, uint64_t tid, uint64_t entry, uint64_t acquired) {
  return format::LockInterval{
      .time = entry,
      .acquired_time = acquired,
      .pid = kPid,
      .tid = tid,
      .address = kMutex,
      .lock_kind = static_cast<uint64_t>(format::LockKind::kMutex),
      .flags = format::kLockContended | format::kLockContendedOnly | format::kLockGoSlowPath,
      .stack_id = kAcquireStack,
      .goid = goid};
}

// A slow unlock entered at `time`, returned at `returned` (default: then).
Row unlockSlow(uint64_t goid, uint64_t tid, uint64_t time, uint64_t returned = 0) {
  return format::LockRelease{.time = time,
                             .pid = kPid,
                             .tid = tid,
                             .address = kMutex,
                             .lock_kind = static_cast<uint64_t>(format::LockKind::kMutex),
                             .goid = goid,
                             .stack_id = kReleaseStack,
                             .return_time = returned != 0 ? returned : time};
}

uint64_t timeOf(const Row& row) {
  return std::visit([](const auto& r) { return r.time; }, row);
}

struct Holds {
  std::vector<CriticalSection> sections;
  LockRowCounts counts;
};

// Feeds `rows` by time, a lock row before a release at the same time.
Holds holdsOf(std::vector<Row> rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::make_pair(timeOf(a), a.index()) < std::make_pair(timeOf(b), b.index());
  });
  Holds holds;
  LockRowStream stream({.section = [&](const CriticalSection& s) { holds.sections.push_back(s); }});
  for (const Row& row : rows) {
    stream.settleBefore(timeOf(row));
    std::visit([&](const auto& r) { stream.add(r); }, row);
  }
  holds.counts = stream.finish();
  return holds;
}

TEST(GoMutexHolds, AHoldTakenByAContendedLockIsExact) {
  // Goroutine 1 waits [100, 200]; goroutine 2 comes at 150 and sleeps until
  // 1 unlocks at 300 and it takes the mutex at 400.
  Holds h = holdsOf({lockSlow(1, 10, 100, 200), lockSlow(2, 11, 150, 400), unlockSlow(1, 10, 300)});
  ASSERT_EQ(h.sections.size(), 1u);
  const CriticalSection& s = h.sections[0];
  EXPECT_EQ(s.tid, 10u);
  EXPECT_EQ(s.goid, 1u);
  EXPECT_EQ(s.start, 200u);
  EXPECT_EQ(s.end, 300u);
  EXPECT_EQ(s.request, 100u);
  EXPECT_EQ(s.stack_id, kAcquireStack);
  EXPECT_EQ(s.start_from, HoldStart::kAcquired);
  EXPECT_TRUE(s.go_slow_paths);
  EXPECT_FALSE(s.inferred);
  EXPECT_EQ(h.counts.go_holds.acquired, 1u);
}

TEST(GoMutexHolds, AHoldFromAnUnseenLockCountsFromTheFirstWaitersArrival) {
  // Goroutine 1 took the mutex by the fast path; 2 comes at 100.
  Holds h = holdsOf({lockSlow(2, 11, 100, 300), unlockSlow(1, 10, 250)});
  ASSERT_EQ(h.sections.size(), 1u);
  EXPECT_EQ(h.sections[0].start, 100u);
  EXPECT_EQ(h.sections[0].end, 250u);
  EXPECT_EQ(h.sections[0].start_from, HoldStart::kEpisodeStart);
  EXPECT_EQ(h.sections[0].stack_id, kReleaseStack);
  EXPECT_EQ(h.counts.go_holds.episode_start, 1u);
}

// The pairing that overstated: goroutine 1's contended Lock returned at 200
// with nobody else waiting, so it could unlock and lock again by the fast
// paths; its slow unlock at 1,200 (2 waits from 1,000) ends a hold seen
// only since 1,000, not one of 1,000 ns from 200.
TEST(GoMutexHolds, AContendedLockBeforeTheEpisodeDoesNotStartTheHold) {
  Holds h =
      holdsOf({lockSlow(1, 10, 100, 200), lockSlow(2, 11, 1000, 1300), unlockSlow(1, 10, 1200)});
  ASSERT_EQ(h.sections.size(), 1u);
  EXPECT_EQ(h.sections[0].start, 1000u);
  EXPECT_EQ(h.sections[0].end, 1200u);
  EXPECT_EQ(h.sections[0].start_from, HoldStart::kEpisodeStart);
}

TEST(GoMutexHolds, ATryLockInsideTheEpisodeCountsFromThePreviousRelease) {
  // 2 sleeps [100, 900]; 1 unlocks at 200 (unlockSlow returns at 230),
  // takes the mutex back by TryLock before 2 runs, and unlocks again at 400;
  // 3 takes it by TryLock while 1 is still in that unlockSlow, and unlocks
  // at 700.
  Holds h = holdsOf({lockSlow(2, 11, 100, 900), unlockSlow(1, 10, 200, 230),
                     unlockSlow(1, 10, 400, 450), unlockSlow(3, 12, 700)});
  ASSERT_EQ(h.sections.size(), 3u);
  EXPECT_EQ(h.sections[0].start, 100u);
  EXPECT_EQ(h.sections[0].start_from, HoldStart::kEpisodeStart);
  // 1 could not take it again before its own unlock returned.
  EXPECT_EQ(h.sections[1].start, 230u);
  EXPECT_EQ(h.sections[1].end, 400u);
  EXPECT_EQ(h.sections[1].start_from, HoldStart::kAfterPrevious);
  // Another goroutine could, once the unlock began.
  EXPECT_EQ(h.sections[2].start, 400u);
  EXPECT_EQ(h.sections[2].start_from, HoldStart::kAfterPrevious);
  EXPECT_EQ(h.counts.go_holds.after_previous, 2u);
}

TEST(GoMutexHolds, AnotherGoroutinesAcquisitionInBetweenEndsTheExactStart) {
  // 1 takes it at 200; 3 takes it at 260 (1 let go unseen); 1 takes it
  // again unseen and unlocks at 300 while 2 waits.
  Holds h = holdsOf({lockSlow(1, 10, 100, 200), lockSlow(2, 11, 120, 500),
                     lockSlow(3, 12, 150, 260), unlockSlow(1, 10, 300)});
  ASSERT_EQ(h.sections.size(), 1u);
  EXPECT_EQ(h.sections[0].start, 260u);
  EXPECT_EQ(h.sections[0].start_from, HoldStart::kAfterPrevious);
}

TEST(GoMutexHolds, AnUnlockOutsideEveryRecordedWaitStartsNoHold) {
  // 2's wait ended at 400; 2 unlocks at 500 with no lockSlow recorded
  // around it (its waiter entered before the recording, say).
  Holds h = holdsOf({lockSlow(1, 10, 100, 200), lockSlow(2, 11, 150, 400), unlockSlow(1, 10, 300),
                     unlockSlow(2, 11, 500)});
  EXPECT_EQ(h.sections.size(), 1u);
  EXPECT_EQ(h.counts.go_holds.unplaced_releases, 1u);
}

TEST(GoMutexHolds, GoroutinesWithoutIdsAreToldApartByThread) {
  Holds h = holdsOf({lockSlow(0, 10, 100, 200), lockSlow(0, 11, 150, 400), unlockSlow(0, 10, 300)});
  ASSERT_EQ(h.sections.size(), 1u);
  EXPECT_EQ(h.sections[0].start_from, HoldStart::kAcquired);
}

TEST(GoMutexHolds, GoRowsMakeNoHoldsInferredFromWakes) {
  // A releaser on the row (the thread of the last slow unlock) once made an
  // inferred section ending at the waiter's acquisition; now only the
  // release rows make holds.
  Row waited = lockSlow(2, 11, 100, 300);
  std::get<format::LockInterval>(waited).releaser_tid = 10;
  Holds h = holdsOf({waited});
  EXPECT_TRUE(h.sections.empty());
  EXPECT_EQ(h.counts.inferred_sections, 0u);
}

TEST(GoMutexHolds, AHoldStillToComeHoldsBackItsThreadsRows) {
  LockRowStream stream({});
  stream.add(std::get<format::LockInterval>(lockSlow(2, 11, 100, 600)));
  stream.settleBefore(150);
  // Any thread may be the one whose unlock ends the hold begun at 100.
  EXPECT_EQ(stream.pendingSectionStart(uint64_t{12}), 100u);
  EXPECT_EQ(stream.pendingSectionStart(LockId{kPid, kMutex}), 100u);
  stream.add(std::get<format::LockRelease>(unlockSlow(1, 10, 200)));
  EXPECT_EQ(stream.pendingSectionStart(uint64_t{12}), 200u);
  stream.settleBefore(601);  // the episode is over
  EXPECT_EQ(stream.pendingSectionStart(uint64_t{12}), UINT64_MAX);
  stream.finish();
}

TEST(GoMutexHolds, LockStatsCallHoldsFromABoundBoundedAndNameTheHolderGoroutine) {
  Holds h = holdsOf({lockSlow(2, 11, 100, 600), unlockSlow(1, 10, 200), unlockSlow(1, 10, 400),
                     lockSlow(1, 10, 500, 700), unlockSlow(2, 11, 650)});
  LockStatsBuilder stats(LockGrouping::kByLock, {});
  for (const CriticalSection& s : h.sections) stats.add(s);
  // The releaser, as the rows name it (exact: a probed call).
  format::LockInterval row = std::get<format::LockInterval>(lockSlow(2, 11, 100, 600));
  row.releaser_tid = 10;
  stats.noteWait(row,
                 {.kind = WaitKind::kMutex, .holder_tid = 10, .holder_source = HoldSource::kExact});
  std::vector<LockGroupStats> groups = stats.finish(3);
  ASSERT_EQ(groups.size(), 1u);
  const LockGroupStats& g = groups[0];
  EXPECT_EQ(g.go_holds.holds(), 3u);
  EXPECT_EQ(g.go_holds.episode_start, 1u);       // 1's, when 2 came
  EXPECT_EQ(g.go_holds.after_previous, 1u);      // 1's TryLock
  EXPECT_EQ(g.go_holds.acquired, 1u);            // 2's, [600, 650)
  EXPECT_EQ(g.hold_source, HoldSource::kExact);  // the holder; two starts are bounds
  EXPECT_EQ(g.holder_goid, 1u);                  // 100 + 200 ns against 2's 50
  EXPECT_EQ(g.hold.total, 100u + 200u + 50u);
}

}  // namespace
}  // namespace incise::analyzer
