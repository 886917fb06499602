// Which stacks the scheduler's switch rows carry (--sched-stacks): an
// interruptible block (a sleep) gets its user stack only by default, and
// its kernel stack too with --sched-stacks all. Records the bundled sleeper
// with real BPF. And which blocks get switch rows at all (--sched-min-block).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "format/event_kinds.h"
#include "tests/recorder/locks_recording.h"

namespace incise::testing {
namespace {

const std::string kSleeper = INCISE_WORKLOADS_DIR "/sleeper";

struct BlockStacks {
  uint64_t blocks = 0;
  uint64_t with_user = 0;
  uint64_t with_kernel = 0;
};

// include/linux/sched.h: a block in TASK_UNINTERRUPTIBLE (a page cache fault,
// the mmap lock under memory pressure) gets its kernel stack by default.
constexpr uint64_t kTaskUninterruptible = 0x2;

enum class Blocks { kInterruptible, kAll };

BlockStacks sleeperBlocks(const std::vector<std::string>& options, Blocks which) {
  Recording run =
      record(options, {kSleeper, "--count", "10", "--interval-ms", "5", "--pipe-ms", "0"});
  RemoveOnExit cleanup{run.trace_path};
  EXPECT_EQ(run.exit_code, 0) << run.recorder_stderr;
  TraceView trace(run.trace_path);
  EXPECT_TRUE(trace.ok()) << trace.error();
  BlockStacks result;
  if (!trace.ok()) return result;
  uint64_t tid = run.value("tid");
  for (const format::SchedSwitch& s : trace.rows<format::SchedSwitch>()) {
    if (s.prev_tid != tid || s.prev_state == 0 || s.stack_id == 0) continue;
    if (which == Blocks::kInterruptible && (s.prev_state & kTaskUninterruptible) != 0) continue;
    ++result.blocks;
    bool user = false, kernel = false;
    for (uint64_t frame : trace.reader().stacks().frames(s.stack_id))
      (format::isKernelAddress(frame) ? kernel : user) = true;
    result.with_user += user;
    result.with_kernel += kernel;
  }
  return result;
}

TEST(SchedStacks, AnInterruptibleBlockGetsItsUserStackOnly) {
  INCISE_REQUIRE_RECORDING();
  BlockStacks blocked = sleeperBlocks({"-F", "19", "--locks", "off"}, Blocks::kInterruptible);
  ASSERT_GE(blocked.blocks, 10u);
  EXPECT_EQ(blocked.with_user, blocked.blocks);
  EXPECT_EQ(blocked.with_kernel, 0u);
}

TEST(SchedStacks, AllWalksTheKernelStackOfEveryBlockToo) {
  INCISE_REQUIRE_RECORDING();
  BlockStacks blocked =
      sleeperBlocks({"-F", "19", "--locks", "off", "--sched-stacks", "all"}, Blocks::kAll);
  ASSERT_GE(blocked.blocks, 10u);
  EXPECT_EQ(blocked.with_kernel, blocked.blocks);
  EXPECT_EQ(blocked.with_user, blocked.blocks);
}

// The off-CPU intervals the recorder's note says it did not write.
uint64_t shortBlocksNoted(TraceView& trace) {
  const std::string kPrefix = "scheduler: ";
  for (const std::string& note : trace.reader().metadata().notes)
    if (note.rfind(kPrefix, 0) == 0 && note.find("not written") != std::string::npos)
      return std::strtoull(note.c_str() + kPrefix.size(), nullptr, 10);
  return 0;
}

struct SleeperSwitches {
  uint64_t nanosleep_calls = 0;
  uint64_t blocks_written = 0;  // the main thread's blocking switches in the trace
  uint64_t blocks_noted = 0;
};

SleeperSwitches sleeperWithMinBlock(const std::string& min_block_us) {
  // 20 sleeps of 2 ms, then a 100 ms wait on a pipe, on one cpu: each sleep
  // ends on the cpu it began on (a block that moves cpu is always written).
  Recording run = record(
      {"-F", "19", "--locks", "off", "--sched-min-block", min_block_us},
      {"taskset", "-c", "0", kSleeper, "--count", "20", "--interval-ms", "2", "--pipe-ms", "100"});
  RemoveOnExit cleanup{run.trace_path};
  EXPECT_EQ(run.exit_code, 0) << run.recorder_stderr;
  TraceView trace(run.trace_path);
  EXPECT_TRUE(trace.ok()) << trace.error();
  SleeperSwitches result{.nanosleep_calls = run.value("nanosleep_calls")};
  if (!trace.ok()) return result;
  for (const format::SchedSwitch& s : trace.rows<format::SchedSwitch>())
    result.blocks_written += s.prev_tid == run.value("tid") && s.prev_state != 0;
  result.blocks_noted = shortBlocksNoted(trace);
  return result;
}

TEST(SchedMinBlock, BlocksLongerThanTheThresholdAreWritten) {
  INCISE_REQUIRE_RECORDING();
  SleeperSwitches run = sleeperWithMinBlock("1000");  // 1 ms, the default
  ASSERT_EQ(run.nanosleep_calls, 20u);
  // Each 2 ms sleep and the pipe wait; the start-up's short blocks are not.
  EXPECT_GE(run.blocks_written, 21u);
}

TEST(SchedMinBlock, BlocksShorterThanTheThresholdAreCountedNotWritten) {
  INCISE_REQUIRE_RECORDING();
  SleeperSwitches run = sleeperWithMinBlock("20000");  // 20 ms
  ASSERT_EQ(run.nanosleep_calls, 20u);
  // The 20 sleeps are counted in the note; the 100 ms pipe wait is written.
  EXPECT_GE(run.blocks_noted, 20u);
  EXPECT_GE(run.blocks_written, 1u);
  EXPECT_LT(run.blocks_written, 20u);
}

}  // namespace
}  // namespace incise::testing
