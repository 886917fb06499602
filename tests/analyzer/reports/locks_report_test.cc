// `incise locks` on small traces with known answers, both lock modes.
#include <gtest/gtest.h>

#include "tests/analyzer/reports/lock_story_trace.h"
#include "tests/analyzer/reports/report_json_runner.h"

namespace incise::analyzer {
int runLocks(const std::vector<std::string>& args);

namespace {

using testing::buildLockStory;
using testing::runReportJson;
using testing::TraceBuilder;

TEST(LocksReport, AllModePerLock) {
  TraceBuilder b;
  buildLockStory(b, false);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  nlohmann::json doc;
  ASSERT_EQ(runReportJson(runLocks, {*path}, doc), 0);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["lock_mode"], "all");
  ASSERT_EQ(doc["groups"].size(), 1u);
  const nlohmann::json& g = doc["groups"][0];
  EXPECT_EQ(g["name"], "0x5000 (update_account)");
  EXPECT_EQ(g["site"], "update_account");
  EXPECT_EQ(g["site_context"], "update_account <- worker_main");
  EXPECT_EQ(g["kind"], "mutex");
  EXPECT_EQ(g["acquisitions"], 3);
  EXPECT_EQ(g["contended"], 2);
  EXPECT_DOUBLE_EQ(g["contended_percent"].get<double>(), 66.67);
  EXPECT_EQ(g["wait_ns"]["total"], 5800);  // 3500 + 2300 + 0
  EXPECT_EQ(g["wait_ns"]["p50"], 2300);
  EXPECT_EQ(g["wait_ns"]["max"], 3500);
  EXPECT_EQ(g["hold_ns"]["total"], 4600);  // 4000 + 500 + 100
  EXPECT_EQ(g["hold_ns"]["p50"], 500);
  EXPECT_EQ(g["hold_ns"]["p99"], 4000);
  EXPECT_FALSE(g["hold_inferred"].get<bool>());
  ASSERT_EQ(g["top_waiters"].size(), 2u);
  EXPECT_EQ(g["top_waiters"][0]["name"], "waiter-1");
  EXPECT_EQ(g["top_waiters"][0]["ns"], 3500);
  EXPECT_EQ(g["top_holders"][0]["name"], "holder");
  EXPECT_EQ(g["top_holders"][0]["ns"], 4000);
  // 100 -> [64, 128), 500 -> [256, 512), 4000 -> [2048, 4096).
  const nlohmann::json& histogram = g["hold_histogram"];
  ASSERT_EQ(histogram.size(), 6u);
  EXPECT_EQ(histogram[0]["from_ns"], 64);
  EXPECT_EQ(histogram[0]["count"], 1);
  EXPECT_EQ(histogram[2]["from_ns"], 256);
  EXPECT_EQ(histogram[2]["count"], 1);
  EXPECT_EQ(histogram[5]["from_ns"], 2048);
  EXPECT_EQ(histogram[5]["count"], 1);
  EXPECT_EQ(histogram[1]["count"], 0);
}

TEST(LocksReport, ContendedModeInfersHolds) {
  TraceBuilder b;
  buildLockStory(b, true);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  nlohmann::json doc;
  ASSERT_EQ(runReportJson(runLocks, {*path, "--by", "site"}, doc), 0);
  EXPECT_EQ(doc["lock_mode"], "contended");
  EXPECT_EQ(doc["inferred_sections"], 2);
  // Site grouping: the inferred holder section of "holder" has no recorded
  // acquire (so no site); the other is waiter-1's, taken at update_account.
  ASSERT_EQ(doc["groups"].size(), 2u);
  const nlohmann::json& g = doc["groups"][0];
  EXPECT_EQ(g["site"], "update_account");
  EXPECT_EQ(g["acquisitions"], 2);
  EXPECT_TRUE(g["contended_percent"].is_null());
  EXPECT_EQ(g["wait_ns"]["total"], 5800);
  EXPECT_EQ(g["hold_ns"]["total"], 500);  // waiter-1 [5000, 5500)
  EXPECT_TRUE(g["hold_inferred"].get<bool>());
  EXPECT_EQ(doc["groups"][1]["site"], "[unknown site]");
  EXPECT_EQ(doc["groups"][1]["hold_ns"]["total"], 3500);  // holder [1500, 5000)
}

TEST(LocksReport, RejectsABadGrouping) {
  EXPECT_EQ(runLocks({"/nonexistent.trace", "--by", "color"}), 2);
  EXPECT_EQ(runLocks({"/nonexistent.trace"}), 1);
}

}  // namespace
}  // namespace incise::analyzer
