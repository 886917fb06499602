// A schedule written whole and the same schedule with its short blocks
// decided the way the scheduler program decides them itself
// (bpf/kernel_blocks.bpf.h) replay to the same thread states. The program
// keeps a switch's row with prev's block until the block's switch-in says
// how long it was, so rows come after rows of later times; a short block
// becomes part of a tally per (thread, state, stack). The analyzer reads
// rows in time order; every row says rows of its cpu may have been left out
// before it.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "bpf/kernel_blocks.h"
#include "tests/recorder/simulated_schedule.h"

namespace incise::testing {
namespace {

constexpr uint64_t kTaskDead = 0x80;
constexpr uint64_t kTallyPeriodNs = SUMMARY_PERIOD_NS;

// The program's decisions, as the rows and summaries the recorder writes
// from what it sends (recorder/sources/kernel_block_rows.cc).
class KernelDecidedBlocks {
 public:
  explicit KernelDecidedBlocks(bool preemptions_written)
      : preemptions_written_(preemptions_written) {}

  void onSwitch(const format::SchedSwitch& s) {
    bool prev_target = isSimulatedTarget(s.prev_tid) && s.prev_pid != 0;
    bool next_target = isSimulatedTarget(s.next_tid) && s.next_pid != 0;
    bool next_half = next_target && switchIn(static_cast<uint32_t>(s.next_tid), s.next_pid, s.time);
    // A row whose prev's block waits for its end waits with it.
    if (prev_target && !switchOut(s, next_target, next_half)) return;
    if (!prev_target && !(next_target && next_half)) {
      ++switches_not_written;
      return;
    }
    format::SchedSwitch row = s;
    if (!prev_target) row.stack_id = 0;
    row.elided = format::switch_elided::kCpuRowsBefore |
                 (next_target && !next_half ? format::switch_elided::kNextIn : 0);
    rows.emplace_back(row);
  }

  void onWakeup(const format::Wakeup& w) {
    if (!isSimulatedTarget(w.wakee_tid)) return;
    auto it = blocks_.find(static_cast<uint32_t>(w.wakee_tid));
    if (it != blocks_.end() && it->second.pending && !it->second.held &&
        w.time - it->second.since < kMinBlock) {
      it->second.held = w;
      ++wakeups_held;
      return;
    }
    rows.emplace_back(w);
  }

  // The end of the recording: the sweep.
  void finish() {
    for (auto& [tid, block] : blocks_) {
      if (block.pending) {
        block.pending = false;
        sendLate(block, true);
        if (block.held) rows.emplace_back(*block.held);
      }
    }
    for (const auto& [key, summary] : tallies_) summaries.push_back(summary);
    tallies_.clear();
  }

  std::vector<ScheduleRow> rows;
  std::vector<format::BlockSummary> summaries;
  uint64_t short_blocks = 0;
  uint64_t short_block_ns = 0;
  uint64_t short_preemptions = 0;
  uint64_t late_rows = 0;
  uint64_t switches_not_written = 0;
  uint64_t wakeups_held = 0;

 private:
  struct Block {
    bool seen = false;
    bool pending = false;
    bool next_was_target = false;
    bool next_written = false;  // next's half of the switch-out's row
    uint64_t since = 0;
    format::SchedSwitch out;
    std::optional<format::Wakeup> held;
  };

  // The switch-out's row once its block is decided: long (`prev_written`),
  // or short with next's half written.
  void sendLate(const Block& block, bool prev_written) {
    format::SchedSwitch row = block.out;
    if (!prev_written) row.stack_id = 0;
    row.elided =
        format::switch_elided::kCpuRowsBefore |
        (prev_written ? 0 : format::switch_elided::kPrevOut) |
        (block.next_was_target && !block.next_written ? format::switch_elided::kNextIn : 0);
    rows.emplace_back(row);
    late_rows += prev_written;
  }

  // Returns whether the switch-in's half is written.
  bool switchIn(uint32_t tid, uint64_t pid, uint64_t time) {
    auto it = blocks_.find(tid);
    if (it == blocks_.end() || !it->second.seen) return true;
    Block& block = it->second;
    if (block.pending) {
      block.pending = false;
      uint64_t length = time - block.since;
      if (length < kMinBlock) {
        tally(tid, pid, block, time);
        block.held.reset();
        if (block.next_written)
          sendLate(block, false);
        else
          ++switches_not_written;
        return false;
      }
      sendLate(block, true);
    }
    if (block.held) rows.emplace_back(*block.held);
    block.held.reset();
    return true;
  }

  // Returns whether the switch-out's half is written now.
  bool switchOut(const format::SchedSwitch& s, bool next_target, bool next_written) {
    Block& block = blocks_[static_cast<uint32_t>(s.prev_tid)];
    if (block.pending) sendLate(block, true);
    bool first = !block.seen;
    bool kept =
        first || (s.prev_state & kTaskDead) != 0 || (s.prev_state == 0 && preemptions_written_);
    block.seen = true;
    block.since = s.time;
    block.out = s;
    block.next_was_target = next_target;
    block.next_written = next_written;
    block.held.reset();
    block.pending = !kept;
    return kept;
  }

  void tally(uint32_t tid, uint64_t pid, const Block& block, uint64_t in_time) {
    auto key = std::make_tuple(tid, block.out.prev_state, block.out.stack_id);
    auto it = tallies_.find(key);
    if (it != tallies_.end() && block.since >= it->second.time + kTallyPeriodNs) {
      summaries.push_back(it->second);
      tallies_.erase(it);
      it = tallies_.end();
    }
    if (it == tallies_.end()) {
      it = tallies_
               .emplace(key, format::BlockSummary{.time = block.since,
                                                  .pid = pid,
                                                  .tid = tid,
                                                  .prev_state = block.out.prev_state,
                                                  .stack_id = block.out.stack_id})
               .first;
    }
    uint64_t length = in_time - block.since;
    format::BlockSummary& summary = it->second;
    summary.end_time = in_time;
    summary.count += 1;
    summary.total_ns += length;
    summary.max_ns = std::max(summary.max_ns, length);
    summary.wakeups += block.held ? 1 : 0;
    ++short_blocks;
    short_block_ns += length;
    short_preemptions += block.out.prev_state == 0;
  }

  bool preemptions_written_;
  std::map<uint32_t, Block> blocks_;
  std::map<std::tuple<uint32_t, uint64_t, uint64_t>, format::BlockSummary> tallies_;
};

class KernelDecidedSchedule : public ::testing::TestWithParam<std::tuple<uint32_t, bool>> {};

TEST_P(KernelDecidedSchedule, ReplaysToTheStatesOfTheWholeSchedule) {
  const auto [seed, preemptions_written] = GetParam();
  SimulatedSchedule schedule = simulateSchedule(seed, 4000);
  KernelDecidedBlocks kernel(preemptions_written);
  for (const ScheduleRow& row : schedule.rows) {
    if (const auto* s = std::get_if<format::SchedSwitch>(&row))
      kernel.onSwitch(*s);
    else
      kernel.onWakeup(std::get<format::Wakeup>(row));
  }
  kernel.finish();
  // Every kind of decision happened: short blocks counted, long ones
  // written late, switches with no row, wake-ups held.
  EXPECT_GT(kernel.short_blocks, 200u);
  EXPECT_GT(kernel.late_rows, 20u);
  EXPECT_GT(kernel.switches_not_written, 100u);
  EXPECT_GT(kernel.wakeups_held, 100u);
  if (preemptions_written)
    EXPECT_EQ(kernel.short_preemptions, 0u);
  else
    EXPECT_GT(kernel.short_preemptions, 5u);
  EXPECT_LT(kernel.rows.size(), schedule.rows.size() / 2);

  std::vector<ScheduleRow> rows = kernel.rows;
  sortByTime(rows);
  ReplayedSchedule whole = replaySchedule(schedule.rows, schedule.end, {});
  ReplayedSchedule decided = replaySchedule(rows, schedule.end, kernel.summaries);
  EXPECT_EQ(whole.consistency.inconsistencies(), 0u);
  EXPECT_EQ(decided.consistency.missing_switch_ins, 0u);
  EXPECT_EQ(decided.consistency.missing_switch_outs, 0u);
  EXPECT_EQ(decided.consistency.summarized_blocks, kernel.short_blocks);
  EXPECT_EQ(decided.consistency.summarized_ns, kernel.short_block_ns);
  expectSameThreadStates(whole, decided, schedule.rows);
}

INSTANTIATE_TEST_SUITE_P(Seeds, KernelDecidedSchedule,
                         ::testing::Combine(::testing::Values(1u, 2u, 3u), ::testing::Bool()));

}  // namespace
}  // namespace incise::testing
