#include <gtest/gtest.h>

#include "analyzer/model/trace.h"
#include "analyzer/reports/thread_states.h"
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
  EXPECT_NE(result.output.find(
                "101  100  waiter   4.200 us    300 ns   500 ns    1      0     1        1\n"),
            std::string::npos)
      << result.output;
}

// One row per chunk, switches written newest first: the replay streams them
// back in time order and gets the answer of the ordinary file.
TEST(SchedTest, ChunksOutOfTimeOrderGiveTheSameAnswer) {
  testing::TraceBuilder plain;
  auto plain_path = testing::writeSchedTrace(plain);
  testing::TraceBuilder scattered;
  scattered.setRowsPerChunk(1);
  auto scattered_path = testing::writeSchedTrace(scattered, testing::SchedRowOrder::kNewestFirst);
  ASSERT_TRUE(plain_path && scattered_path);
  nlohmann::json expected = runReportJson(runSched, {*plain_path});
  nlohmann::json got = runReportJson(runSched, {*scattered_path});
  EXPECT_EQ(got["threads"], expected["threads"]);
  EXPECT_EQ(got["threads"].size(), 2u);
}

// A wake-up and the switch-in it caused at the same time, in different
// chunks: the wake-up goes first, so the thread waited (0 ns) in a runqueue.
TEST(SchedTest, WakeupBeforeSwitchAtTheSameTime) {
  testing::TraceBuilder b;
  b.setRowsPerChunk(1);
  b.thread(101, "waiter");
  b.sched(0, 0, 0, 0, 101);
  b.sched(100, 0, 101, 1, 0);
  b.sched(500, 0, 0, 0, 101);  // written before the wake-up
  b.wakeup(500, 102, 101);
  b.setEnd(1000);
  auto path = b.write();
  ASSERT_TRUE(path);
  TraceOptions options;
  options.progress = false;
  auto trace = Trace::open(*path, options);
  ASSERT_TRUE(trace);
  ThreadStateMachine machine;
  replaySchedule(**trace, Replay::kSwitchesAndWakeups, machine);
  const ThreadSchedStats& waiter = machine.threads().at(101);
  EXPECT_EQ(waiter.wakeups, 1u);
  EXPECT_EQ(waiter.runqueue_waits, 1u);
  EXPECT_EQ(waiter.blocked_ns, 400u);

  ThreadStateMachine switches_only;
  replaySchedule(**trace, Replay::kSwitches, switches_only);
  EXPECT_EQ(switches_only.threads().at(101).wakeups, 0u);
  EXPECT_EQ(switches_only.threads().at(101).runqueue_waits, 0u);
}

}  // namespace
}  // namespace incise::analyzer
