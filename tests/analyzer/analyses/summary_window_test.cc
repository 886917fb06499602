// cutToWindow: summary rows cut by a --time window keep the part inside.
#include "analyzer/analyses/summaries/summary_window.h"

#include <gtest/gtest.h>

namespace incise::analyzer {
namespace {

constexpr uint64_t kSecond = 1'000'000'000;

format::WaitSummary waitSummary() {
  return {.time = 0,
          .end_time = 5 * kSecond,
          .pid = 7,
          .tid = 8,
          .address = 0x1000,
          .bucket = 14,
          .count = 1000,
          .total_ns = 20'000'000,
          .max_ns = 31'000};
}

TEST(SummaryWindow, AWaitSummaryInsideTheWindowIsKeptWhole) {
  format::WaitSummary row = waitSummary();
  ASSERT_TRUE(cutToWindow(row, {.start = 0, .end = 10 * kSecond}));
  EXPECT_EQ(row.count, 1000u);
  EXPECT_EQ(row.total_ns, 20'000'000u);
  EXPECT_EQ(row.time, 0u);
  EXPECT_EQ(row.end_time, 5 * kSecond);
}

TEST(SummaryWindow, AWaitSummaryCutByTheWindowKeepsItsShareAndItsLongest) {
  format::WaitSummary row = waitSummary();
  // One second of its five: a fifth of its waits and their time.
  ASSERT_TRUE(cutToWindow(row, {.start = 4 * kSecond, .end = 9 * kSecond}));
  EXPECT_EQ(row.count, 200u);
  EXPECT_EQ(row.total_ns, 4'000'000u);
  EXPECT_EQ(row.max_ns, 31'000u);
  EXPECT_EQ(row.bucket, 14u);
  EXPECT_EQ(row.time, 4 * kSecond);
  EXPECT_EQ(row.end_time, 5 * kSecond);
}

TEST(SummaryWindow, ASliverOfASummaryCountsOneWaitAtLeast) {
  format::WaitSummary row = waitSummary();
  ASSERT_TRUE(cutToWindow(row, {.start = 5 * kSecond - 1000, .end = 6 * kSecond}));
  EXPECT_EQ(row.count, 1u);
  EXPECT_EQ(row.total_ns, 4u);
}

TEST(SummaryWindow, ABlockSummaryScalesItsWakeupsToo) {
  format::BlockSummary row{.time = kSecond,
                           .end_time = 3 * kSecond,
                           .pid = 7,
                           .tid = 8,
                           .count = 100,
                           .total_ns = 8'000'000,
                           .max_ns = 900'000,
                           .wakeups = 50};
  ASSERT_TRUE(cutToWindow(row, {.start = 0, .end = 2 * kSecond}));
  EXPECT_EQ(row.count, 50u);
  EXPECT_EQ(row.total_ns, 4'000'000u);
  EXPECT_EQ(row.wakeups, 25u);
  EXPECT_EQ(row.max_ns, 900'000u);
  EXPECT_EQ(row.end_time, 2 * kSecond);
}

TEST(SummaryWindow, ASummaryOutsideTheWindowIsDropped) {
  format::WaitSummary row = waitSummary();
  EXPECT_FALSE(cutToWindow(row, {.start = 6 * kSecond, .end = 7 * kSecond}));
  format::WaitSummary empty = waitSummary();
  empty.count = 0;
  EXPECT_FALSE(cutToWindow(empty, {}));
}

}  // namespace
}  // namespace incise::analyzer
