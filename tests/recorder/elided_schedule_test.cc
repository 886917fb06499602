// A schedule written whole and the same schedule through ShortBlocks (short
// sleeps, and short preemptions unless every one is written, summarised,
// their halves elided, rows left out) replay to the same thread states: the
// elided replay reads a summarised interval as running, and the block
// summaries give it back as off-CPU or runqueue time.
#include <gtest/gtest.h>

#include <tuple>
#include <variant>
#include <vector>

#include "recorder/sources/short_blocks.h"
#include "tests/recorder/simulated_schedule.h"

namespace incise {
namespace {

using recorder::ShortBlocks;

using testing::kA;
using testing::kB;
using testing::kC;
using testing::kMinBlock;
using testing::ScheduleRow;

struct Elided {
  std::vector<ScheduleRow> rows;
  std::vector<format::BlockSummary> summaries;
  ShortBlocks::Counts counts;
  uint64_t rows_after_left_out = 0;  // written with switch_elided::kCpuRowsBefore
};

Elided throughShortBlocks(const testing::SimulatedSchedule& schedule,
                          ShortBlocks::Preemptions preemptions) {
  ShortBlocks blocks(kMinBlock, preemptions);
  Elided out;
  auto take = [&] {
    for (ScheduleRow& row : blocks.takeReady()) out.rows.push_back(std::move(row));
    for (const format::BlockSummary& s : blocks.takeSummaries()) out.summaries.push_back(s);
  };
  for (const ScheduleRow& row : schedule.rows) {
    if (const auto* s = std::get_if<format::SchedSwitch>(&row)) {
      blocks.onSwitch(*s, testing::isSimulatedTarget(s->prev_tid),
                      testing::isSimulatedTarget(s->next_tid));
    } else {
      const auto& w = std::get<format::Wakeup>(row);
      blocks.onWakeup(w, testing::isSimulatedTarget(w.wakee_tid));
    }
    take();
  }
  blocks.finish();
  take();
  out.counts = blocks.counts();
  for (const ScheduleRow& row : out.rows)
    if (const auto* s = std::get_if<format::SchedSwitch>(&row);
        s != nullptr && (s->elided & format::switch_elided::kCpuRowsBefore) != 0)
      ++out.rows_after_left_out;
  return out;
}

class ElidedSchedule
    : public ::testing::TestWithParam<std::tuple<uint32_t, ShortBlocks::Preemptions>> {};

TEST_P(ElidedSchedule, ReplaysToTheStatesOfTheWholeSchedule) {
  const auto [seed, preemptions] = GetParam();
  testing::SimulatedSchedule schedule = testing::simulateSchedule(seed, 4000);
  Elided elided = throughShortBlocks(schedule, preemptions);
  // The schedule exercises every kind of elision; it has no futex waits, so
  // short preemptions are summarised unless every one is written.
  EXPECT_GT(elided.counts.short_blocks, 200u);
  EXPECT_GT(elided.counts.switches_dropped, 100u);
  EXPECT_GT(elided.counts.switches_half_elided, 5u);
  EXPECT_GT(elided.rows_after_left_out, 20u);
  if (preemptions == ShortBlocks::Preemptions::kWritten) {
    EXPECT_GT(elided.counts.short_preemptions_kept, 5u);
    EXPECT_EQ(elided.counts.short_preemptions_summarised, 0u);
  } else {
    // Only a thread's first switch-out, written whatever it is.
    EXPECT_LE(elided.counts.short_preemptions_kept, 3u);
    EXPECT_GT(elided.counts.short_preemptions_summarised, 5u);
  }
  EXPECT_LT(elided.rows.size(), schedule.rows.size() / 2);

  testing::ReplayedSchedule whole = testing::replaySchedule(schedule.rows, schedule.end, {});
  testing::ReplayedSchedule summarised =
      testing::replaySchedule(elided.rows, schedule.end, elided.summaries);
  EXPECT_EQ(whole.consistency.inconsistencies(), 0u);
  EXPECT_EQ(summarised.consistency.missing_switch_ins, 0u);
  EXPECT_EQ(summarised.consistency.missing_switch_outs, 0u);
  EXPECT_EQ(summarised.consistency.summarized_blocks, elided.counts.short_blocks);
  EXPECT_EQ(summarised.consistency.summarized_ns, elided.counts.short_block_ns);
  testing::expectSameThreadStates(whole, summarised, schedule.rows);
}

INSTANTIATE_TEST_SUITE_P(
    Seeds, ElidedSchedule,
    ::testing::Combine(::testing::Values(1u, 2u, 3u),
                       ::testing::Values(ShortBlocks::Preemptions::kWritten,
                                         ShortBlocks::Preemptions::kSummarisedOutsideWaits)));

}  // namespace
}  // namespace incise
