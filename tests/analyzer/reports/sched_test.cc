#include <gtest/gtest.h>

#include "tests/analyzer/reports/report_runner.h"
#include "tests/analyzer/reports/sched_trace.h"

namespace incise::analyzer {
int runSched(const std::vector<std::string>& args);

namespace {
using testing::runReportJson;

const nlohmann::json* thread(const nlohmann::json& doc, int tid) {
  for (const auto& t : doc["threads"]) {
    if (t["tid"] == tid) return &t;
  }
  return nullptr;
}

TEST(SchedTest, TimeRunningRunnableBlockedSwitchesMigrations) {
  testing::TraceBuilder b;
  auto path = testing::writeSchedTrace(b);
  ASSERT_TRUE(path) << path.error().message();
  nlohmann::json doc = runReportJson(runSched, {*path});
  ASSERT_EQ(doc["threads"].size(), 2u) << doc.dump();
  EXPECT_EQ(doc["threads"][0]["tid"], 101);  // most running first

  const nlohmann::json* waiter = thread(doc, 101);
  ASSERT_NE(waiter, nullptr);
  EXPECT_EQ((*waiter)["comm"], "waiter");
  EXPECT_EQ((*waiter)["pid"], testing::TraceBuilder::kPid);
  EXPECT_EQ((*waiter)["running_ns"], 4200);
  EXPECT_EQ((*waiter)["blocked_ns"], 500);
  EXPECT_EQ((*waiter)["runnable_ns"], 300);
  EXPECT_EQ((*waiter)["voluntary_switches"], 1);
  EXPECT_EQ((*waiter)["involuntary_switches"], 0);
  EXPECT_EQ((*waiter)["migrations"], 1);
  EXPECT_EQ((*waiter)["wakeups"], 1);

  const nlohmann::json* spinner = thread(doc, 102);
  ASSERT_NE(spinner, nullptr);
  EXPECT_EQ((*spinner)["running_ns"], 3000);
  EXPECT_EQ((*spinner)["runnable_ns"], 1000);
  EXPECT_EQ((*spinner)["blocked_ns"], 0);
  EXPECT_EQ((*spinner)["voluntary_switches"], 0);
  EXPECT_EQ((*spinner)["involuntary_switches"], 1);
  EXPECT_EQ((*spinner)["migrations"], 0);
  EXPECT_EQ(doc["header"]["duration_ns"], 5000);
}

TEST(SchedTest, ThreadFilterShowsOnlyThatThread) {
  testing::TraceBuilder b;
  auto path = testing::writeSchedTrace(b);
  ASSERT_TRUE(path);
  nlohmann::json doc = runReportJson(runSched, {*path, "--tid", "102"});
  ASSERT_EQ(doc["threads"].size(), 1u);
  EXPECT_EQ(doc["threads"][0]["tid"], 102);
  EXPECT_EQ(doc["threads"][0]["running_ns"], 3000);
  nlohmann::json by_comm = runReportJson(runSched, {*path, "--comm", "waiter"});
  ASSERT_EQ(by_comm["threads"].size(), 1u);
  EXPECT_EQ(by_comm["threads"][0]["tid"], 101);
}

TEST(SchedTest, TableHasOneLinePerThread) {
  testing::TraceBuilder b;
  auto path = testing::writeSchedTrace(b);
  ASSERT_TRUE(path);
  auto result = testing::runReport(runSched, {*path});
  ASSERT_EQ(result.exit_code, 0);
  EXPECT_NE(result.output.find("RUNNING  RUNNABLE  BLOCKED"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("101  100  waiter   4.200 us    300 ns   500 ns    1      0     1        1\n"), std::string::npos)
      << result.output;
}

}  // namespace
}  // namespace incise::analyzer
