#include <gtest/gtest.h>

#include "tests/analyzer/reports/report_runner.h"
#include "tests/analyzer/reports/sched_trace.h"

namespace incise::analyzer {
int runOffcpu(const std::vector<std::string>& args);

namespace {
using testing::runReportJson;

TEST(OffcpuTest, TimePerStackAndReasonAndRunqueueLatency) {
  testing::TraceBuilder b;
  auto path = testing::writeSchedTrace(b);
  ASSERT_TRUE(path) << path.error().message();
  nlohmann::json doc = runReportJson(runOffcpu, {*path});
  EXPECT_EQ(doc["off_cpu_ns"]["blocked"], 800);
  EXPECT_EQ(doc["off_cpu_ns"]["preempted"], 1000);
  ASSERT_EQ(doc["stacks"].size(), 2u) << doc.dump();
  EXPECT_EQ(doc["stacks"][0]["reason"], "preempted");
  EXPECT_EQ(doc["stacks"][0]["off_cpu_ns"], 1000);
  EXPECT_EQ(doc["stacks"][0]["frames"], (std::vector<std::string>{"main", "spin"}));
  EXPECT_DOUBLE_EQ(doc["stacks"][0]["percent"].get<double>(), 55.56);
  EXPECT_EQ(doc["stacks"][1]["reason"], "blocked");
  EXPECT_EQ(doc["stacks"][1]["off_cpu_ns"], 800);
  EXPECT_EQ(doc["stacks"][1]["switches"], 1);
  EXPECT_EQ(doc["stacks"][1]["frames"], (std::vector<std::string>{"main", "lock", "futex_wait"}));

  ASSERT_EQ(doc["runqueue_latency"].size(), 2u);
  EXPECT_EQ(doc["runqueue_latency"][0]["tid"], 102);
  EXPECT_EQ(doc["runqueue_latency"][0]["waits"], 1);
  EXPECT_EQ(doc["runqueue_latency"][0]["max_ns"], 1000);
  EXPECT_EQ(doc["runqueue_latency"][1]["tid"], 101);
  EXPECT_EQ(doc["runqueue_latency"][1]["total_ns"], 300);
}

TEST(OffcpuTest, FiltersByThread) {
  testing::TraceBuilder b;
  auto path = testing::writeSchedTrace(b);
  ASSERT_TRUE(path);
  nlohmann::json doc = runReportJson(runOffcpu, {*path, "--tid", "101"});
  EXPECT_EQ(doc["off_cpu_ns"]["blocked"], 800);
  EXPECT_EQ(doc["off_cpu_ns"]["preempted"], 0);
  ASSERT_EQ(doc["runqueue_latency"].size(), 1u);
  EXPECT_EQ(doc["runqueue_latency"][0]["tid"], 101);
}

TEST(OffcpuTest, TableShowsLeafFirstStacks) {
  testing::TraceBuilder b;
  auto path = testing::writeSchedTrace(b);
  ASSERT_TRUE(path);
  auto result = testing::runReport(runOffcpu, {*path});
  ASSERT_EQ(result.exit_code, 0);
  EXPECT_NE(result.output.find("off-CPU: 800 ns blocked, 1.000 us preempted"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("blocked    futex_wait <- lock <- main"), std::string::npos)
      << result.output;
}

}  // namespace
}  // namespace incise::analyzer
