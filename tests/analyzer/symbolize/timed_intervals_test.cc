#include "analyzer/symbolize/timed_intervals.h"

#include <gtest/gtest.h>

#include <string>

namespace incise::analyzer {
namespace {

TEST(TimedIntervals, LaterRangeReplacesOverlapFromItsTimeOn) {
  TimedIntervals<std::string> maps;
  maps.add(0x1000, 0x9000, 10, "big-old");
  maps.add(0x3000, 0x4000, 50, "small-new");
  maps.add(0x20000, 0x20000, 0, "empty, ignored");
  maps.finish();
  EXPECT_EQ(maps.size(), 2u);

  auto before = maps.find(0x3800, 20);
  ASSERT_NE(before.value, nullptr);
  EXPECT_EQ(*before.value, "big-old");
  EXPECT_EQ(before.valid_from, 10u);
  EXPECT_EQ(before.valid_until, 50u);

  auto after = maps.find(0x3800, 60);
  ASSERT_NE(after.value, nullptr);
  EXPECT_EQ(*after.value, "small-new");
  EXPECT_EQ(after.valid_from, 50u);

  // Outside the small range the old one still covers.
  EXPECT_EQ(*maps.find(0x8000, 60).value, "big-old");
  EXPECT_EQ(maps.find(0x9000, 60).value, nullptr);
  EXPECT_EQ(maps.find(0x800, 60).value, nullptr);

  auto too_early = maps.find(0x2000, 5);
  EXPECT_EQ(too_early.value, nullptr);
  EXPECT_EQ(too_early.valid_until, 10u);
  auto fallback = maps.find(0x2000, 5, /*or_earliest_later=*/true);
  ASSERT_NE(fallback.value, nullptr);
  EXPECT_EQ(*fallback.value, "big-old");
  EXPECT_TRUE(fallback.from_later);
  EXPECT_FALSE(after.from_later);
}

TEST(TimedIntervals, EqualTimesPreferTheLastAdded) {
  TimedIntervals<int> maps;
  maps.add(100, 200, 7, 1);
  maps.add(100, 200, 7, 2);
  maps.finish();
  EXPECT_EQ(*maps.find(150, 7).value, 2);
}

}  // namespace
}  // namespace incise::analyzer
