// KernelBlockRows: the rows the recorder writes from what the scheduler
// program decided itself (bpf/kernel_blocks.h).
#include "recorder/sources/kernel_block_rows.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace incise::recorder {
namespace {

constexpr uint32_t kPid = 100, kTid = 101;

decided_switch_event decidedSwitch(uint32_t flags, uint32_t elided) {
  decided_switch_event e{};
  e.header = {.type = EVENT_DECIDED_SWITCH, .cpu = 1, .time = 5000, .pid = kPid, .tid = kTid};
  e.prev_state = 1;
  e.next_pid = 0;
  e.next_tid = 0;
  e.elided = elided;
  e.flags = flags;
  e.prev_goid = 7;
  e.next_goid = 8;
  return e;
}

block_tally_event tally(uint64_t stack_hash) {
  block_tally_event e{};
  e.header = {.type = EVENT_BLOCK_TALLY, .cpu = 0, .time = 1000, .pid = kPid, .tid = kTid};
  e.end_time = 900'000;
  e.total_ns = 40'000;
  e.max_ns = 15'000;
  e.stack_hash = stack_hash;
  e.prev_state = 1;
  e.count = 4;
  e.wakeups = 3;
  return e;
}

TEST(KernelBlockRows, ASwitchRecordIsARowOnlyWhenTheProgramSaysSo) {
  EXPECT_FALSE(KernelBlockRows::switchRow(decidedSwitch(DECIDED_NEXT_ENDS_WAIT, 0), 9));
  auto row = KernelBlockRows::switchRow(
      decidedSwitch(DECIDED_ROW | DECIDED_LATE, DECIDED_NEXT_ELIDED | DECIDED_CPU_ROWS_BEFORE | 64),
      9);
  ASSERT_TRUE(row);
  EXPECT_EQ(row->time, 5000u);
  EXPECT_EQ(row->cpu, 1u);
  EXPECT_EQ(row->prev_tid, kTid);
  EXPECT_EQ(row->prev_state, 1u);
  EXPECT_EQ(row->stack_id, 9u);
  EXPECT_EQ(row->goid, 7u);
  EXPECT_EQ(row->next_goid, 8u);
  // Only the format's elided bits, whatever else the record held.
  EXPECT_EQ(row->elided, format::switch_elided::kNextIn | format::switch_elided::kCpuRowsBefore);
}

TEST(KernelBlockRows, ATallyTakesTheStackItsThreadAnnounced) {
  KernelBlockRows rows;
  rows.onTallyStack(kTid, 0xabc, 42);
  format::BlockSummary summary = rows.summaryOf(tally(0xabc));
  EXPECT_EQ(summary.stack_id, 42u);
  EXPECT_EQ(summary.time, 1000u);
  EXPECT_EQ(summary.end_time, 900'000u);
  EXPECT_EQ(summary.pid, kPid);
  EXPECT_EQ(summary.tid, kTid);
  EXPECT_EQ(summary.prev_state, 1u);
  EXPECT_EQ(summary.count, 4u);
  EXPECT_EQ(summary.total_ns, 40'000u);
  EXPECT_EQ(summary.max_ns, 15'000u);
  EXPECT_EQ(summary.wakeups, 3u);
  // A hash no record of this thread named, or another thread's: no stack.
  EXPECT_EQ(rows.summaryOf(tally(0xdef)).stack_id, 0u);
  block_tally_event other = tally(0xabc);
  other.header.tid = kTid + 1;
  EXPECT_EQ(rows.summaryOf(other).stack_id, 0u);
}

TEST(KernelBlockRows, AReusedTidForgetsTheOldThreadsStacks) {
  KernelBlockRows rows;
  rows.onTallyStack(kTid, 0xabc, 42);
  rows.onNewThread(kTid);
  EXPECT_EQ(rows.summaryOf(tally(0xabc)).stack_id, 0u);
}

TEST(KernelBlockRows, ATallyEndingBeforeItBeganEndsWhereItBegan) {
  KernelBlockRows rows;
  block_tally_event e = tally(0);
  e.end_time = 10;
  EXPECT_EQ(rows.summaryOf(e).end_time, 1000u);
}

TEST(KernelBlockRows, TheNoteSaysWhatTheKernelCounted) {
  std::vector<uint64_t> counts(KERNEL_BLOCK_COUNTS, 0);
  counts[KERNEL_BLOCKS_SHORT] = 1234;
  counts[KERNEL_BLOCKS_SHORT_NS] = 5'000'000;
  counts[KERNEL_BLOCKS_TALLIES] = 17;
  counts[KERNEL_BLOCKS_SWEPT] = 2;
  std::string note = KernelBlockRows::note(counts, 1000);
  EXPECT_EQ(note.rfind("scheduler: 1234 off-CPU intervals shorter than 1000 us", 0), 0u) << note;
  EXPECT_NE(note.find("5.000 ms off-CPU"), std::string::npos) << note;
  EXPECT_NE(note.find("counted in 17 block summary rows"), std::string::npos) << note;
  EXPECT_NE(note.find("2 still open at the end"), std::string::npos) << note;
  // Fewer counts than slots (an older program): the rest read as 0.
  EXPECT_NE(KernelBlockRows::note({5}, 1000).find("counted in 0 block summary rows"),
            std::string::npos);
}

}  // namespace
}  // namespace incise::recorder
