// ShortBlocks: which switch and wake-up rows of short off-CPU intervals are
// written, in what order, and what is counted instead.
#include "recorder/sources/short_blocks.h"

#include <gtest/gtest.h>

#include <variant>
#include <vector>

namespace incise::recorder {
namespace {

constexpr uint64_t kUs = 1000;
constexpr uint64_t kMinBlock = 1000 * kUs;  // 1 ms
constexpr uint32_t kPid = 100, kA = 101, kB = 102, kOutsider = 900;

format::SchedSwitch switchRow(uint64_t time, uint32_t prev_tid, uint32_t next_tid,
                              uint64_t cpu = 0) {
  auto pid = [](uint32_t tid) -> uint64_t { return tid == 0 ? 0 : tid == kOutsider ? 9 : kPid; };
  return {.time = time,
          .cpu = cpu,
          .prev_pid = pid(prev_tid),
          .prev_tid = prev_tid,
          .prev_state = 1,
          .next_pid = pid(next_tid),
          .next_tid = next_tid};
}

format::Wakeup wakeupRow(uint64_t time, uint32_t wakee_tid) {
  return {.time = time,
          .waker_pid = 9,
          .waker_tid = kOutsider,
          .wakee_pid = kPid,
          .wakee_tid = wakee_tid};
}

bool isTarget(uint32_t tid) {
  return tid == kA || tid == kB;
}

void onSwitch(ShortBlocks& blocks, uint64_t time, uint32_t prev_tid, uint32_t next_tid,
              uint64_t cpu = 0) {
  blocks.onSwitch(switchRow(time, prev_tid, next_tid, cpu), isTarget(prev_tid), isTarget(next_tid));
}

// A filter that has seen A's and B's first switch-outs (always written) on a
// cpu of their own, with nothing left held or counted.
ShortBlocks seenBlocks(
    size_t max_summaries = ShortBlocks::kDefaultMaxSummaries,
    ShortBlocks::Preemptions preemptions = ShortBlocks::Preemptions::kSummarisedOutsideWaits) {
  constexpr uint64_t kOwnCpu = 7;
  ShortBlocks blocks(kMinBlock, preemptions, max_summaries);
  for (uint32_t tid : {kA, kB}) {
    blocks.onSwitch(switchRow(0, tid, 0, kOwnCpu), true, false);
    blocks.onSwitch(switchRow(0, 0, tid, kOwnCpu), false, true);
  }
  blocks.takeReady();
  return blocks;
}

// Each written row as (time, 's' or 'w').
std::vector<std::pair<uint64_t, char>> written(ShortBlocks& blocks) {
  std::vector<std::pair<uint64_t, char>> out;
  for (const ShortBlocks::Row& row : blocks.takeReady()) {
    if (const auto* s = std::get_if<format::SchedSwitch>(&row))
      out.emplace_back(s->time, 's');
    else
      out.emplace_back(std::get<format::Wakeup>(row).time, 'w');
  }
  return out;
}

using Rows = std::vector<std::pair<uint64_t, char>>;

// Each written switch row as (time, elided bits).
std::vector<std::pair<uint64_t, uint64_t>> writtenSwitches(ShortBlocks& blocks) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (const ShortBlocks::Row& row : blocks.takeReady())
    if (const auto* s = std::get_if<format::SchedSwitch>(&row))
      out.emplace_back(s->time, s->elided);
  return out;
}

using Switches = std::vector<std::pair<uint64_t, uint64_t>>;
constexpr uint64_t kPrevOut = format::switch_elided::kPrevOut;
constexpr uint64_t kNextIn = format::switch_elided::kNextIn;
constexpr uint64_t kCpuRowsBefore = format::switch_elided::kCpuRowsBefore;

TEST(ShortBlocks, DropsTheRowsOfABlockShorterThanTheThresholdAndCountsIt) {
  ShortBlocks blocks = seenBlocks();
  onSwitch(blocks, 0, kA, 0);  // A blocks, the cpu goes idle
  blocks.onWakeup(wakeupRow(10 * kUs, kA), true);
  onSwitch(blocks, 20 * kUs, 0, kA);  // back after 20 us
  blocks.finish();
  EXPECT_EQ(written(blocks), Rows{});
  EXPECT_EQ(blocks.counts().short_blocks, 1u);
  EXPECT_EQ(blocks.counts().short_block_ns, 20 * kUs);
  EXPECT_EQ(blocks.counts().switches_dropped, 2u);
  EXPECT_EQ(blocks.counts().wakeups_dropped, 1u);
}

TEST(ShortBlocks, AThreadsFirstSwitchOutIsWritten) {
  ShortBlocks blocks(kMinBlock);
  onSwitch(blocks, 0, kA, 0);  // where A ran until now: written
  onSwitch(blocks, 20 * kUs, 0, kA);
  onSwitch(blocks, 30 * kUs, kA, 0);  // its next short sleep is summarised
  onSwitch(blocks, 50 * kUs, 0, kA);
  blocks.finish();
  EXPECT_EQ(writtenSwitches(blocks), (Switches{{0, 0}, {20 * kUs, 0}}));
  EXPECT_EQ(blocks.counts().short_blocks, 1u);
}

// The kernel did not report A's switch-in after its first block: A's next
// switch-out is all that says it ran again, so it is written whole even
// when the block it begins is a short preemption.
TEST(ShortBlocks, ASwitchOutAfterAMissingSwitchInIsWritten) {
  ShortBlocks blocks = seenBlocks();
  onSwitch(blocks, 0, kA, kOutsider);  // A preempted; its switch-in goes unreported
  format::SchedSwitch again = switchRow(5000 * kUs, kA, kOutsider);
  again.prev_state = 0;
  blocks.onSwitch(again, true, false);
  onSwitch(blocks, 5020 * kUs, kOutsider, kA);  // back 20 us later
  blocks.finish();
  EXPECT_EQ(writtenSwitches(blocks), (Switches{{0, 0}, {5000 * kUs, 0}, {5020 * kUs, 0}}));
  EXPECT_EQ(blocks.counts().short_blocks, 0u);
}

TEST(ShortBlocks, KeepsEveryRowOfALongBlockInArrivalOrder) {
  ShortBlocks blocks = seenBlocks();
  onSwitch(blocks, 0, kA, 0);
  blocks.onWakeup(wakeupRow(900 * kUs, kA), true);
  EXPECT_EQ(written(blocks), Rows{});  // not decided yet
  onSwitch(blocks, 1200 * kUs, 0, kA);
  EXPECT_EQ(written(blocks), (Rows{{0, 's'}, {900 * kUs, 'w'}, {1200 * kUs, 's'}}));
  EXPECT_EQ(blocks.counts().short_blocks, 0u);
}

TEST(ShortBlocks, ABlockIsLongOnceTheThresholdHasPassedWithoutItsEnd) {
  ShortBlocks blocks = seenBlocks();
  onSwitch(blocks, 0, kA, 0);
  // A row on another cpu 2 ms later: A has been off the cpu for longer than
  // the threshold, so its switch-out is written before A comes back.
  onSwitch(blocks, 2000 * kUs, kOutsider, 0, 1);
  EXPECT_EQ(written(blocks), (Rows{{0, 's'}}));
  blocks.onWakeup(wakeupRow(2100 * kUs, kA), true);  // written at once
  EXPECT_EQ(written(blocks), (Rows{{2100 * kUs, 'w'}}));
}

TEST(ShortBlocks, AHandoffToAnotherTargetIsWrittenWithTheShortSleepsHalfElided) {
  ShortBlocks blocks = seenBlocks();
  onSwitch(blocks, 0, kB, 0);            // B blocks for 5 ms
  onSwitch(blocks, 5000 * kUs, kA, kB);  // A leaves for B: written for B's switch-in
  onSwitch(blocks, 5010 * kUs, 0, kA);   // A's 10 us sleep: this row has no real half
  blocks.finish();
  EXPECT_EQ(writtenSwitches(blocks), (Switches{{0, 0}, {5000 * kUs, kPrevOut}}));
  EXPECT_EQ(blocks.counts().short_blocks, 1u);
  EXPECT_EQ(blocks.counts().switches_dropped, 1u);
  EXPECT_EQ(blocks.counts().switches_half_elided, 1u);
}

TEST(ShortBlocks, AShortSleepThatEndsOnAnotherCpuIsSummarised) {
  ShortBlocks blocks = seenBlocks();
  onSwitch(blocks, 0, kA, 0, 0);
  blocks.onWakeup(wakeupRow(10 * kUs, kA), true);
  onSwitch(blocks, 20 * kUs, 0, kA, 1);
  blocks.finish();
  EXPECT_EQ(written(blocks), Rows{});
  EXPECT_EQ(blocks.counts().short_blocks, 1u);
  EXPECT_EQ(blocks.counts().short_block_ns, 20 * kUs);
  EXPECT_EQ(blocks.counts().switches_dropped, 2u);
  EXPECT_EQ(blocks.counts().wakeups_dropped, 1u);
  std::vector<format::BlockSummary> summaries = blocks.takeSummaries();
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_EQ(summaries[0].wakeups, 1u);
}

TEST(ShortBlocks, TargetsHandingTheCpuToEachOtherKeepOnlyTheRealHalves) {
  ShortBlocks blocks = seenBlocks();
  onSwitch(blocks, 0, kB, kA);         // B sleeps; A first seen: a real switch-in
  onSwitch(blocks, 10 * kUs, kA, kB);  // A sleeps, B back after 10 us
  onSwitch(blocks, 20 * kUs, kB, kA);  // B sleeps, A back after 10 us
  onSwitch(blocks, 30 * kUs, kA, kB);  // A sleeps to the end, B back after 10 us
  blocks.finish();
  // The two middle rows are elided on both sides; the first keeps A's
  // switch-in, the last A's switch-out, and it follows rows left out.
  EXPECT_EQ(writtenSwitches(blocks),
            (Switches{{0, kPrevOut}, {30 * kUs, kNextIn | kCpuRowsBefore}}));
  EXPECT_EQ(blocks.counts().short_blocks, 3u);
  EXPECT_EQ(blocks.counts().short_block_ns, 30 * kUs);
  EXPECT_EQ(blocks.counts().switches_dropped, 2u);
  EXPECT_EQ(blocks.counts().switches_half_elided, 2u);
}

TEST(ShortBlocks, AShortSleepEndingInAnotherTargetsLongSleepKeepsThatHalf) {
  ShortBlocks blocks = seenBlocks();
  onSwitch(blocks, 0, kA, 0, 0);          // A sleeps on cpu 0
  onSwitch(blocks, 20 * kUs, kB, kA, 1);  // back on cpu 1, where B leaves for 3 ms
  onSwitch(blocks, 3020 * kUs, kOutsider, kB, 1);
  blocks.finish();
  EXPECT_EQ(writtenSwitches(blocks), (Switches{{20 * kUs, kNextIn}, {3020 * kUs, 0}}));
  EXPECT_EQ(blocks.counts().short_blocks, 1u);
}

TEST(ShortBlocks, TheRowAfterRowsLeftOutOnItsCpuSaysSo) {
  ShortBlocks blocks = seenBlocks();
  onSwitch(blocks, 0, kA, 0);         // A out
  onSwitch(blocks, 10 * kUs, 0, kB);  // B in on A's cpu (first seen: written)
  onSwitch(blocks, 15 * kUs, kB, 0);  // B out to the end
  onSwitch(blocks, 20 * kUs, 0, kA);  // A back after 20 us
  blocks.finish();
  EXPECT_EQ(writtenSwitches(blocks), (Switches{{10 * kUs, kCpuRowsBefore}, {15 * kUs, 0}}));
  EXPECT_EQ(blocks.counts().short_blocks, 1u);
}

TEST(ShortBlocks, RowsLeaveInArrivalOrderBehindAnUndecidedOne) {
  ShortBlocks blocks = seenBlocks();
  onSwitch(blocks, 0, kA, 0, 0);         // undecided until A is back
  onSwitch(blocks, 10 * kUs, 0, kB, 1);  // B first seen: written, but behind A's
  EXPECT_EQ(written(blocks), Rows{});
  onSwitch(blocks, 40 * kUs, kOutsider, kA, 0);  // A's sleep was short
  EXPECT_EQ(written(blocks), (Rows{{10 * kUs, 's'}}));
}

TEST(ShortBlocks, AHandoffRowIsWrittenWholeOnceTheSleepHasLastedTheThreshold) {
  ShortBlocks blocks = seenBlocks();
  onSwitch(blocks, 0, kA, kB, 0);                            // A sleeps, B first seen
  blocks.onWakeup(wakeupRow(1500 * kUs, kOutsider), false);  // any row 1.5 ms later
  EXPECT_EQ(writtenSwitches(blocks), (Switches{{0, 0}}));
  onSwitch(blocks, 1600 * kUs, 0, kA, 1);
  EXPECT_EQ(writtenSwitches(blocks), (Switches{{1600 * kUs, 0}}));
  EXPECT_EQ(blocks.counts().short_blocks, 0u);
}

TEST(ShortBlocks, AShortPreemptionEndingOnAnotherCpuIsWrittenWholeWhenEveryOneIs) {
  ShortBlocks blocks =
      seenBlocks(ShortBlocks::kDefaultMaxSummaries, ShortBlocks::Preemptions::kWritten);
  format::SchedSwitch preempted = switchRow(0, kA, kOutsider, 0);
  preempted.prev_state = 0;
  blocks.onSwitch(preempted, true, false);
  onSwitch(blocks, 20 * kUs, kB, kA, 1);  // B sleeps to the end
  blocks.finish();
  EXPECT_EQ(writtenSwitches(blocks), (Switches{{0, 0}, {20 * kUs, 0}}));
  EXPECT_EQ(blocks.counts().short_preemptions_kept, 1u);
  EXPECT_EQ(blocks.counts().short_blocks, 0u);
}

TEST(ShortBlocks, AnOutsiderRunningInTheBracketIsDroppedWithIt) {
  ShortBlocks blocks = seenBlocks();
  onSwitch(blocks, 0, kA, kOutsider);
  onSwitch(blocks, 30 * kUs, kOutsider, kA);
  blocks.finish();
  EXPECT_EQ(written(blocks), Rows{});
  EXPECT_EQ(blocks.counts().short_blocks, 1u);
}

TEST(ShortBlocks, WakeUpsThatEndNoTargetBlockAreNotWritten) {
  ShortBlocks blocks = seenBlocks();
  blocks.onWakeup(wakeupRow(0, kOutsider), false);  // a thread outside the targets
  blocks.onWakeup(wakeupRow(1 * kUs, kA), true);    // A is running: no block to end
  blocks.finish();
  EXPECT_EQ(written(blocks), Rows{});
  EXPECT_EQ(blocks.counts().wakeups_dropped, 2u);
}

TEST(ShortBlocks, AThreadFirstSeenComingInIsWrittenBehindEarlierHeldRows) {
  ShortBlocks blocks = seenBlocks();
  onSwitch(blocks, 0, kA, kOutsider);         // held until A's block is decided
  onSwitch(blocks, 50 * kUs, kOutsider, kB);  // B's block began before we saw it
  onSwitch(blocks, 1500 * kUs, kB, kA);       // A was out 1.5 ms; B's sleep to come
  EXPECT_EQ(written(blocks), (Rows{{0, 's'}, {50 * kUs, 's'}}));
  blocks.finish();
  EXPECT_EQ(written(blocks), (Rows{{1500 * kUs, 's'}}));
}

TEST(ShortBlocks, TheThreadThatHandsTheCpuBackMayBeAnotherOutsider) {
  ShortBlocks blocks = seenBlocks();
  onSwitch(blocks, 0, kA, 0);                 // A out to idle
  onSwitch(blocks, 30 * kUs, kOutsider, kA);  // idle -> outsider is not recorded
  blocks.finish();
  EXPECT_EQ(written(blocks), Rows{});
  EXPECT_EQ(blocks.counts().short_blocks, 1u);
}

TEST(ShortBlocks, FinishWritesTheBlocksTheRecordingEndsIn) {
  ShortBlocks blocks = seenBlocks();
  onSwitch(blocks, 0, kA, 0);
  blocks.onWakeup(wakeupRow(5 * kUs, kA), true);
  blocks.finish();
  EXPECT_EQ(written(blocks), (Rows{{0, 's'}, {5 * kUs, 'w'}}));
}

// A blocking switch-out of `tid` to idle carrying `stack`, back `length` later;
// `out_waits` and `in_waits` are the futex waits the source knows at each end.
void shortBlock(ShortBlocks& blocks, uint64_t time, uint32_t tid, uint64_t length,
                uint64_t stack = 7, uint64_t prev_state = 1,
                ShortBlocks::FutexWaits out_waits = {0, 0},
                ShortBlocks::FutexWaits in_waits = {0, 0}) {
  format::SchedSwitch out = switchRow(time, tid, 0);
  out.stack_id = stack;
  out.prev_state = prev_state;
  blocks.onSwitch(out, true, false, out_waits);
  blocks.onSwitch(switchRow(time + length, 0, tid), false, true, in_waits);
}

TEST(ShortBlocks, ADroppedBlockIsCountedPerThreadStateAndStack) {
  ShortBlocks blocks = seenBlocks();
  shortBlock(blocks, 0, kA, 20 * kUs);
  onSwitch(blocks, 100 * kUs, kA, 0);
  blocks.onWakeup(wakeupRow(130 * kUs, kA), true);
  onSwitch(blocks, 150 * kUs, 0, kA);  // the same stack (0 here: another key)
  shortBlock(blocks, 200 * kUs, kA, 60 * kUs);
  shortBlock(blocks, 300 * kUs, kB, 10 * kUs);
  blocks.finish();
  EXPECT_EQ(written(blocks), Rows{});
  std::vector<format::BlockSummary> summaries = blocks.takeSummaries();
  ASSERT_EQ(summaries.size(), 3u);  // in time order
  const format::BlockSummary& a = summaries[0];
  EXPECT_EQ(a.tid, kA);
  EXPECT_EQ(a.pid, kPid);
  EXPECT_EQ(a.stack_id, 7u);
  EXPECT_EQ(a.prev_state, 1u);
  EXPECT_EQ(a.count, 2u);
  EXPECT_EQ(a.total_ns, 80 * kUs);
  EXPECT_EQ(a.max_ns, 60 * kUs);
  EXPECT_EQ(a.time, 0u);
  EXPECT_EQ(a.end_time, 260 * kUs);
  EXPECT_EQ(a.wakeups, 0u);
  EXPECT_EQ(summaries[1].stack_id, 0u);
  EXPECT_EQ(summaries[1].total_ns, 50 * kUs);
  EXPECT_EQ(summaries[1].wakeups, 1u);
  EXPECT_EQ(summaries[2].tid, kB);
  EXPECT_EQ(blocks.counts().short_blocks, 4u);
  EXPECT_EQ(blocks.counts().summaries, 3u);
}

TEST(ShortBlocks, AShortPreemptionOutsideFutexWaitsIsSummarisedAsRunnable) {
  ShortBlocks blocks = seenBlocks();
  shortBlock(blocks, 0, kA, 20 * kUs, 0, /*prev_state=*/0, {0, 3}, {0, 3});
  blocks.finish();
  EXPECT_EQ(written(blocks), Rows{});
  std::vector<format::BlockSummary> summaries = blocks.takeSummaries();
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_EQ(summaries[0].prev_state, 0u);
  EXPECT_EQ(summaries[0].total_ns, 20 * kUs);
  EXPECT_EQ(blocks.counts().short_preemptions_summarised, 1u);
  EXPECT_EQ(blocks.counts().short_preemptions_kept, 0u);
  EXPECT_EQ(blocks.counts().short_blocks, 1u);
}

// Whether a 20-us preemption of A, with these futex waits known at its two
// ends, is written whole (else summarised).
bool shortPreemptionWritten(ShortBlocks::FutexWaits out_waits, ShortBlocks::FutexWaits in_waits) {
  ShortBlocks blocks = seenBlocks();
  shortBlock(blocks, 0, kA, 20 * kUs, 0, /*prev_state=*/0, out_waits, in_waits);
  blocks.finish();
  bool written_whole = written(blocks) == Rows{{0, 's'}, {20 * kUs, 's'}};
  EXPECT_EQ(blocks.counts().short_preemptions_kept, written_whole ? 1u : 0u);
  EXPECT_EQ(blocks.takeSummaries().empty(), written_whole);
  return written_whole;
}

TEST(ShortBlocks, AShortPreemptionWhileAFutexWaitIsInProgressIsWritten) {
  EXPECT_TRUE(shortPreemptionWritten({1, 3}, {0, 3}));
}

// The waiter may be waiting for a lock the preempted thread holds.
TEST(ShortBlocks, AShortPreemptionDuringWhichAFutexWaitBeganIsWritten) {
  EXPECT_TRUE(shortPreemptionWritten({0, 3}, {0, 4}));
  EXPECT_FALSE(shortPreemptionWritten({0, 3}, {0, 3}));
}

TEST(ShortBlocks, AShortSleepIsSummarisedWhateverTheFutexWaits) {
  ShortBlocks blocks = seenBlocks();
  shortBlock(blocks, 0, kA, 20 * kUs, 7, /*prev_state=*/1, {1, 3}, {1, 4});
  blocks.finish();
  EXPECT_EQ(written(blocks), Rows{});
  EXPECT_EQ(blocks.counts().short_blocks, 1u);
}

TEST(ShortBlocks, TheSummaryTableIsWrittenAtItsBoundAndEveryPeriod) {
  constexpr uint64_t kLater = 200 * kUs + ShortBlocks::kSummaryPeriodNs;
  ShortBlocks blocks = seenBlocks(/*max_summaries=*/2);
  shortBlock(blocks, 0, kA, 10 * kUs, 1);
  shortBlock(blocks, 100 * kUs, kA, 10 * kUs, 2);
  EXPECT_TRUE(blocks.takeSummaries().empty());
  shortBlock(blocks, 200 * kUs, kA, 10 * kUs, 3);  // a third key: the two are written
  EXPECT_EQ(blocks.takeSummaries().size(), 2u);
  EXPECT_EQ(blocks.counts().summary_full_flushes, 1u);
  shortBlock(blocks, kLater, kA, 10 * kUs, 3);  // a period later: a new row
  std::vector<format::BlockSummary> one = blocks.takeSummaries();
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].count, 1u);
  EXPECT_EQ(one[0].time, 200 * kUs);
  blocks.finish();
  std::vector<format::BlockSummary> last = blocks.takeSummaries();
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].time, kLater);
  EXPECT_EQ(blocks.counts().summary_full_flushes, 1u);
}

}  // namespace
}  // namespace incise::recorder
