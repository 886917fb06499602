// Which stacks the scheduler's switch rows carry (--sched-stacks): an
// interruptible block (a sleep) gets its user stack only by default, and
// its kernel stack too with --sched-stacks all. Records the bundled sleeper
// with real BPF.
#include <gtest/gtest.h>

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

BlockStacks sleeperBlocks(const std::vector<std::string>& options) {
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
  BlockStacks blocked = sleeperBlocks({"-F", "19", "--locks", "off"});
  ASSERT_GE(blocked.blocks, 10u);
  EXPECT_EQ(blocked.with_user, blocked.blocks);
  EXPECT_EQ(blocked.with_kernel, 0u);
}

TEST(SchedStacks, AllWalksTheKernelStackOfEveryBlockToo) {
  INCISE_REQUIRE_RECORDING();
  BlockStacks blocked = sleeperBlocks({"-F", "19", "--locks", "off", "--sched-stacks", "all"});
  ASSERT_GE(blocked.blocks, 10u);
  EXPECT_EQ(blocked.with_kernel, blocked.blocks);
  EXPECT_EQ(blocked.with_user, blocked.blocks);
}

}  // namespace
}  // namespace incise::testing
