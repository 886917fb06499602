// ContextTimeline on synthetic change rows: where a change is placed
// (halfway through its thread's runs between the two reads, halfway
// between them when no run is known, never at the read that saw the old
// value), a thread's first read, a change at the same nanosecond as an
// event, value 0, a thread's exit and a reused tid, the stretches, and
// the error for a context the header lacks.
#include "analyzer/model/context_timeline.h"

#include <gtest/gtest.h>

#include <map>

namespace incise::analyzer {
namespace {

format::ContextChange change(uint64_t time, uint32_t tid, uint64_t value, uint64_t since = 0) {
  return {.time = time, .pid = 1, .tid = tid, .slot = 0, .value = value, .since = since};
}

ContextTimeline timelineOf(const std::vector<format::ContextChange>& rows,
                           const std::vector<std::vector<TimeRange>>& ran = {},
                           const std::unordered_multimap<uint32_t, uint64_t>& exits = {}) {
  return ContextTimeline::build(rows, ran, exits);
}

TEST(ContextTimeline, AThreadsFirstReadStartsItsValueAndNothingIsKnownBefore) {
  ContextTimeline timeline = timelineOf({change(1000, 7, 42)});
  EXPECT_EQ(timeline.valueAt(7, 999), std::nullopt);
  EXPECT_EQ(timeline.valueAt(7, 1000), 42u);
  EXPECT_EQ(timeline.valueAt(7, 1'000'000), 42u);
  EXPECT_EQ(timeline.valueAt(8, 1000), std::nullopt);  // a thread with no reads
}

TEST(ContextTimeline, ChangesInsideASpanAreWhereItsValueIsConstantBetween) {
  // Thread 7: 1 from 100, 2 from 250 (halfway 200..300), 3 from 450, exit at 600.
  ContextTimeline timeline = timelineOf(
      {change(100, 7, 1), change(300, 7, 2, 200), change(500, 7, 3, 400)}, {}, {{7, 600}});
  std::vector<uint64_t> cuts;
  timeline.changesInside(7, 0, 1000, cuts);
  EXPECT_EQ(cuts, (std::vector<uint64_t>{100, 250, 450, 600}));
  cuts.clear();
  timeline.changesInside(7, 250, 450, cuts);  // both ends excluded
  EXPECT_TRUE(cuts.empty());
  timeline.changesInside(7, 249, 451, cuts);
  EXPECT_EQ(cuts, (std::vector<uint64_t>{250, 450}));
  timeline.changesInside(8, 0, 1000, cuts);  // no such thread: nothing added
  EXPECT_EQ(cuts.size(), 2u);
}

TEST(ContextTimeline, AChangeWithoutKnownRunsIsHalfwayBetweenItsReads) {
  ContextTimeline timeline = timelineOf({change(100, 7, 1), change(300, 7, 2, /*since=*/200)});
  EXPECT_EQ(timeline.valueAt(7, 249), 1u);
  EXPECT_EQ(timeline.valueAt(7, 250), 2u);  // the change's own nanosecond has the new value
  EXPECT_EQ(timeline.valueAt(7, 300), 2u);
}

TEST(ContextTimeline, AChangeIsPlacedHalfwayThroughItsThreadsRuns) {
  // Between the reads at 200 and 1000 the thread ran 300-320 and 800-860:
  // 80 ns, halfway is 40 ns in, 20 ns into the second run.
  const std::vector<format::ContextChange> rows = {change(100, 7, 1), change(1000, 7, 2, 200)};
  ContextTimeline timeline = timelineOf(rows, {{}, {{300, 320}, {800, 860}}});
  EXPECT_EQ(ContextTimeline::changeTime(rows[1], {{300, 320}, {800, 860}}), 820u);
  EXPECT_EQ(timeline.valueAt(7, 819), 1u);
  EXPECT_EQ(timeline.valueAt(7, 820), 2u);
  EXPECT_EQ(ContextTimeline::changeWindow(rows[1]).start, 200u);
  EXPECT_EQ(ContextTimeline::changeWindow(rows[1]).end, 1000u);
  EXPECT_EQ(ContextTimeline::changeWindow(rows[0]).start, 100u);  // a first read: its time
}

TEST(ContextTimeline, TheReadThatSawTheOldValueKeepsIt) {
  // Reads 1 ns apart, and a run of 1 ns starting at the old value's read:
  // halfway would be that read itself.
  const format::ContextChange next = change(201, 7, 2, 200);
  EXPECT_EQ(ContextTimeline::changeTime(next, {}), 201u);
  EXPECT_EQ(ContextTimeline::changeTime(next, {{200, 201}}), 201u);
  ContextTimeline timeline = timelineOf({change(100, 7, 1), next}, {{}, {{200, 201}}});
  EXPECT_EQ(timeline.valueAt(7, 200), 1u);
  EXPECT_EQ(timeline.valueAt(7, 201), 2u);
}

TEST(ContextTimeline, ZeroIsAValue) {
  ContextTimeline timeline = timelineOf({change(100, 7, 0), change(300, 7, 5, 200)});
  EXPECT_EQ(timeline.valueAt(7, 100), 0u);
  EXPECT_EQ(timeline.valueAt(7, 260), 5u);
}

TEST(ContextTimeline, AThreadsExitEndsItsValueAndAReusedTidStartsAfresh) {
  ContextTimeline timeline =
      timelineOf({change(100, 7, 1), change(5000, 7, 9)}, {}, {{7, 1000}, {7, 6000}});
  EXPECT_EQ(timeline.valueAt(7, 999), 1u);
  EXPECT_EQ(timeline.valueAt(7, 1000), std::nullopt);  // the exit's nanosecond: gone
  EXPECT_EQ(timeline.valueAt(7, 4999), std::nullopt);
  EXPECT_EQ(timeline.valueAt(7, 5000), 9u);  // a new thread with the same tid, its first read
  EXPECT_EQ(timeline.valueAt(7, 6000), std::nullopt);
}

TEST(ContextTimeline, StretchesRunFromChangeToChangeOrExit) {
  ContextTimeline timeline =
      timelineOf({change(100, 7, 1), change(300, 7, 2, 200), change(50, 8, 4)}, {}, {{7, 900}});
  std::map<uint64_t, ContextStretch> by_value;
  timeline.forEachStretch([&](const ContextStretch& s) { by_value[s.value] = s; });
  ASSERT_EQ(by_value.size(), 3u);
  EXPECT_EQ(by_value[1].start, 100u);
  EXPECT_EQ(by_value[1].end, 250u);
  EXPECT_EQ(by_value[2].start, 250u);
  EXPECT_EQ(by_value[2].end, 900u);
  EXPECT_EQ(by_value[4].tid, 8u);
  EXPECT_EQ(by_value[4].end, UINT64_MAX);  // nothing ended it
}

TEST(ContextTimeline, AContextTheTraceLacksNamesTheOnesItHas) {
  format::Header header;
  Result<size_t> none = contextSlot(header, "req");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("--context req=SYMBOL"), std::string::npos);
  header.options.contexts.push_back({.name = "req"});
  header.options.contexts.push_back({.name = "conn"});
  Result<size_t> conn = contextSlot(header, "conn");
  ASSERT_TRUE(conn);
  EXPECT_EQ(*conn, 1u);
  Result<size_t> missing = contextSlot(header, "user");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("no context 'user' (it has: req, conn)"),
            std::string::npos)
      << missing.error().message();
}

}  // namespace
}  // namespace incise::analyzer
