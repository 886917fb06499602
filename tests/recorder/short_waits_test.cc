// ShortWaits: which futex waits' lock rows are counted instead of written,
// and what their summaries keep.
#include "recorder/sources/short_waits.h"

#include <gtest/gtest.h>

#include <vector>

#include "format/log2_bucket.h"

namespace incise::recorder {
namespace {

constexpr uint64_t kUs = 1000;
constexpr uint64_t kMinWait = 1000 * kUs;  // 1 ms
constexpr uint64_t kPid = 100, kWaiter = 101, kPoster = 102;
constexpr uint64_t kSem = 0x7f0000001000;

format::LockInterval waitRow(uint64_t start, uint64_t ns, format::WaitObject object,
                             uint64_t address = kSem) {
  return {.time = start,
          .acquired_time = start + ns,
          .pid = kPid,
          .tid = kWaiter,
          .address = address,
          .lock_kind = static_cast<uint64_t>(format::LockKind::kFutex),
          .flags = format::kLockContended | format::kLockContendedOnly | format::kLockFutexFacts,
          .stack_id = 7,
          .releaser_tid = kPoster,
          .object = static_cast<uint64_t>(object),
          .releaser_stack_id = 9};
}

TEST(ShortWaits, CountsShortSemaphoreAndCondvarWaitsPerBucket) {
  ShortWaits waits(kMinWait);
  // 3 waits of 10-15 us (bucket 13: 8192..16383 ns), one of 100 us (bucket 16).
  EXPECT_TRUE(waits.add(waitRow(1000 * kUs, 10 * kUs, format::WaitObject::kSemaphore)));
  EXPECT_TRUE(waits.add(waitRow(1100 * kUs, 12 * kUs, format::WaitObject::kSemaphore)));
  EXPECT_TRUE(waits.add(waitRow(1200 * kUs, 15 * kUs, format::WaitObject::kSemaphore)));
  EXPECT_TRUE(waits.add(waitRow(1300 * kUs, 100 * kUs, format::WaitObject::kSemaphore)));
  EXPECT_TRUE(waits.add(
      waitRow(1500 * kUs, 5 * kUs, format::WaitObject::kCondvarGroup1, kSem + 0x100 + 44)));
  EXPECT_TRUE(waits.takeSummaries().empty());  // held until the period ends
  waits.finish();
  std::vector<format::WaitSummary> rows = waits.takeSummaries();
  ASSERT_EQ(rows.size(), 3u);
  // One table: its rows share its interval, the first start to the last end.
  for (const format::WaitSummary& row : rows) {
    EXPECT_EQ(row.time, 1000 * kUs);
    EXPECT_EQ(row.end_time, 1505 * kUs);
  }
  // By thread, word, stack, waker and bucket.
  const format::WaitSummary& short_sem = rows[0];
  EXPECT_EQ(short_sem.count, 3u);
  EXPECT_EQ(short_sem.total_ns, 37 * kUs);
  EXPECT_EQ(short_sem.max_ns, 15 * kUs);
  EXPECT_EQ(short_sem.bucket, 13u);
  EXPECT_EQ(short_sem.address, kSem);
  EXPECT_EQ(short_sem.object, static_cast<uint64_t>(format::WaitObject::kSemaphore));
  EXPECT_EQ(short_sem.stack_id, 7u);
  EXPECT_EQ(short_sem.releaser_tid, kPoster);
  EXPECT_EQ(short_sem.releaser_stack_id, 9u);
  EXPECT_EQ(rows[1].count, 1u);
  EXPECT_EQ(rows[1].bucket, 16u);
  EXPECT_EQ(rows[2].address, kSem + 0x100 + 44);
  EXPECT_EQ(rows[2].object, static_cast<uint64_t>(format::WaitObject::kCondvarGroup1));
  EXPECT_EQ(waits.counts().waits, 5u);
  EXPECT_EQ(waits.counts().wait_ns, 142 * kUs);
  EXPECT_EQ(waits.counts().summaries, 3u);
}

TEST(ShortWaits, KeepsTheRowsOfLongWaitsLocksJoinsAndOwnedOrGoWaits) {
  ShortWaits waits(kMinWait);
  EXPECT_FALSE(waits.add(waitRow(0, kMinWait, format::WaitObject::kSemaphore)));  // not shorter
  EXPECT_FALSE(waits.add(waitRow(0, 10 * kUs, format::WaitObject::kMutex)));
  EXPECT_FALSE(waits.add(waitRow(0, 10 * kUs, format::WaitObject::kInternalLock)));
  EXPECT_FALSE(waits.add(waitRow(0, 10 * kUs, format::WaitObject::kRwlockWriters)));
  EXPECT_FALSE(waits.add(waitRow(0, 10 * kUs, format::WaitObject::kUnknown)));
  EXPECT_FALSE(waits.add(waitRow(0, 10 * kUs, format::WaitObject::kThread)));  // names the joined
  format::LockInterval owned = waitRow(0, 10 * kUs, format::WaitObject::kSemaphore);
  owned.holder_tid = kPoster;
  EXPECT_FALSE(waits.add(owned));
  format::LockInterval go = waitRow(0, 10 * kUs, format::WaitObject::kSemaphore);
  go.goid = 5;
  EXPECT_FALSE(waits.add(go));
  format::LockInterval unfinished = waitRow(0, 10 * kUs, format::WaitObject::kSemaphore);
  unfinished.flags |= format::kLockWaitUnfinished;
  EXPECT_FALSE(waits.add(unfinished));
  format::LockInterval no_facts = waitRow(0, 10 * kUs, format::WaitObject::kSemaphore);
  no_facts.flags &= ~uint64_t{format::kLockFutexFacts};
  EXPECT_FALSE(waits.add(no_facts));
  waits.finish();
  EXPECT_TRUE(waits.takeSummaries().empty());
  EXPECT_EQ(waits.counts().waits, 0u);
}

TEST(ShortWaits, SeparatesWakersAndStacks) {
  ShortWaits waits(kMinWait);
  format::LockInterval other_poster = waitRow(10 * kUs, 10 * kUs, format::WaitObject::kSemaphore);
  other_poster.releaser_tid = kPoster + 1;
  format::LockInterval other_stack = waitRow(20 * kUs, 10 * kUs, format::WaitObject::kSemaphore);
  other_stack.stack_id = 8;
  EXPECT_TRUE(waits.add(waitRow(0, 10 * kUs, format::WaitObject::kSemaphore)));
  EXPECT_TRUE(waits.add(other_poster));
  EXPECT_TRUE(waits.add(other_stack));
  waits.finish();
  EXPECT_EQ(waits.takeSummaries().size(), 3u);
}

TEST(ShortWaits, EndsSummariesEveryPeriodAndAtTheBound) {
  ShortWaits waits(kMinWait, /*max_summaries=*/2);
  constexpr uint64_t kPeriod = ShortWaits::kSummaryPeriodNs;
  EXPECT_TRUE(waits.add(waitRow(0, 10 * kUs, format::WaitObject::kSemaphore)));
  EXPECT_TRUE(waits.add(waitRow(kPeriod / 2, 10 * kUs, format::WaitObject::kSemaphore)));
  EXPECT_TRUE(waits.takeSummaries().empty());
  // A wait a period after the first ends the table: its wait starts the next.
  EXPECT_TRUE(waits.add(waitRow(kPeriod, 10 * kUs, format::WaitObject::kSemaphore)));
  std::vector<format::WaitSummary> first = waits.takeSummaries();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].count, 2u);
  EXPECT_EQ(first[0].time, 0u);
  EXPECT_EQ(first[0].end_time, kPeriod / 2 + 10 * kUs);
  // Two keys fill the table; a third key writes it early.
  EXPECT_TRUE(waits.add(waitRow(kPeriod + 1, 100 * kUs, format::WaitObject::kSemaphore)));
  EXPECT_TRUE(waits.add(waitRow(kPeriod + 2, 300 * kUs, format::WaitObject::kSemaphore)));
  EXPECT_EQ(waits.takeSummaries().size(), 2u);
  EXPECT_EQ(waits.counts().summary_full_flushes, 1u);
  waits.finish();
  EXPECT_EQ(waits.takeSummaries().size(), 1u);
  EXPECT_EQ(waits.counts().summaries, 4u);
}

TEST(ShortWaits, BucketsAreLog2OfTheWaitTime) {
  EXPECT_EQ(format::log2Bucket(0), 0u);
  EXPECT_EQ(format::log2Bucket(1), 0u);
  EXPECT_EQ(format::log2Bucket(2), 1u);
  EXPECT_EQ(format::log2Bucket(3), 1u);
  EXPECT_EQ(format::log2Bucket(1024), 10u);
  EXPECT_EQ(format::log2Bucket(2047), 10u);
}

}  // namespace
}  // namespace incise::recorder
