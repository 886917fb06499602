#include <gtest/gtest.h>

#include "analyzer/analyses/sched/thread_states.h"
#include "analyzer/model/trace.h"
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

// A -p trace: pid 100 was followed; 300 and 302 only ran beside it.
// By default they are left out (and said to be); --bystanders shows what
// was seen of them: 301 ran [2000, 2500) on cpu 0 with nothing between its
// switch-in and switch-out there; 302 was switched in and never seen again.
TEST(SchedBystanders, LeftOutByDefaultShownAsSeenWithTheFlag) {
  testing::TraceBuilder b;
  b.setTarget("pid 100");
  b.thread(101, "worker");
  b.unnamedThread(301, 300);
  b.unnamedThread(302, 302);
  b.sched(1000, 0, 0, 0, 101);
  b.sched(2000, 0, 101, 1, 301);
  b.wakeup(2400, 301, 101);
  b.sched(2500, 0, 301, 0, 101);
  b.sched(3000, 0, 101, 1, 302);
  b.setEnd(10000);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();

  nlohmann::json doc = runReportJson(runSched, {*path});
  ASSERT_EQ(doc["threads"].size(), 1u) << doc.dump();
  EXPECT_EQ(doc["threads"][0]["tid"], 101);
  EXPECT_EQ(doc["threads"][0]["running_ns"], 1500);
  EXPECT_EQ(doc["threads"][0]["runnable_ns"], 100);
  EXPECT_EQ(doc["threads"][0]["blocked_ns"], 400 + 7000);
  EXPECT_EQ(doc["schedule"]["bystander_threads"], 2);
  EXPECT_EQ(doc["running_total_ns"], 1500);
  auto text = testing::runReport(runSched, {*path});
  EXPECT_NE(text.output.find("2 threads the recorder did not follow"), std::string::npos)
      << text.output;

  nlohmann::json with = runReportJson(runSched, {*path, "--bystanders"});
  ASSERT_EQ(with["threads"].size(), 3u) << with.dump();
  const nlohmann::json* seen = thread(with, 301);
  ASSERT_NE(seen, nullptr);
  EXPECT_TRUE((*seen)["bystander"].get<bool>());
  EXPECT_EQ((*seen)["running_ns"], 500);
  EXPECT_EQ((*seen)["runnable_ns"], 0);
  EXPECT_EQ((*seen)["blocked_ns"], 0);
  const nlohmann::json* unseen = thread(with, 302);
  ASSERT_NE(unseen, nullptr);
  EXPECT_EQ((*unseen)["running_ns"], 0) << "never stretched to the end of the trace";
  EXPECT_EQ(with["running_total_ns"], 2000);
}

// A thread ends at its exit (its last switch-out is in state TASK_DEAD):
// it is not blocked from there to the end of the trace.
TEST(SchedLifetimes, AThreadEndsAtItsExit) {
  testing::TraceBuilder b;
  b.thread(101, "short");
  b.thread(102, "long");
  b.sched(1000, 0, 0, 0, 101);
  b.sched(3000, 0, 101, /*TASK_DEAD*/ 0x80, 102);
  b.sched(4000, 0, 102, 1, 0);
  b.setEnd(100000);
  auto path = b.write();
  ASSERT_TRUE(path);
  nlohmann::json doc = runReportJson(runSched, {*path});
  const nlohmann::json* gone = thread(doc, 101);
  ASSERT_NE(gone, nullptr);
  EXPECT_EQ((*gone)["running_ns"], 2000);
  EXPECT_EQ((*gone)["blocked_ns"], 0);
  EXPECT_EQ((*gone)["voluntary_switches"], 0) << "its exit is not a switch";
  EXPECT_EQ((*gone)["exit_ns"], 3000);
  const nlohmann::json* alive = thread(doc, 102);
  ASSERT_NE(alive, nullptr);
  EXPECT_EQ((*alive)["blocked_ns"], 100000 - 4000);
}

// A thread whose first event is its switch-out was running when the trace
// began: every switch of a followed thread is recorded, so nothing else
// can have happened to it. Its samples then fall in a running interval.
TEST(SchedLifetimes, AThreadRunningAtTheStartRanFromTheStart) {
  testing::TraceBuilder b;
  b.thread(101, "busy");
  b.sched(2500, 1, 101, 0, 0);
  b.setEnd(5000);
  auto path = b.write();
  ASSERT_TRUE(path);
  nlohmann::json doc = runReportJson(runSched, {*path});
  ASSERT_EQ(doc["threads"].size(), 1u);
  EXPECT_EQ(doc["threads"][0]["running_ns"], 2500);
  EXPECT_EQ(doc["threads"][0]["runnable_ns"], 5000 - 2500);
  EXPECT_EQ(doc["threads"][0]["first_ns"], 0);
  // In a --time window it ran from the window's start.
  nlohmann::json window = runReportJson(runSched, {*path, "--time", "0.000001.."});
  ASSERT_EQ(window["threads"].size(), 1u);
  EXPECT_EQ(window["threads"][0]["running_ns"], 1500);
}

// Two cpus' clocks disagree by a little: the switch-in on cpu 1 (at 2000)
// comes before the switch-out on cpu 0 (at 2005). The thread ran without a
// break, and the late switch-out is only counted as a switch.
TEST(SchedConsistency, ASwitchInBeforeTheSwitchOutOnAnotherCpuIsOneRun) {
  testing::TraceBuilder b;
  b.thread(101, "mover");
  b.sched(1000, 0, 0, 0, 101);
  b.sched(2000, 1, 0, 0, 101);
  b.sched(2005, 0, 101, 0, 0);
  b.sched(3000, 1, 101, 1, 0);
  b.setEnd(4000);
  auto path = b.write();
  ASSERT_TRUE(path);
  nlohmann::json doc = runReportJson(runSched, {*path});
  ASSERT_EQ(doc["threads"].size(), 1u);
  EXPECT_EQ(doc["threads"][0]["running_ns"], 2000);
  EXPECT_EQ(doc["threads"][0]["blocked_ns"], 1000);
  EXPECT_EQ(doc["threads"][0]["runnable_ns"], 0);
  EXPECT_EQ(doc["threads"][0]["migrations"], 1);
  EXPECT_EQ(doc["threads"][0]["involuntary_switches"], 1);
  EXPECT_EQ(doc["schedule"]["reordered_switches"], 1);
  EXPECT_EQ(doc["schedule"]["missing_switch_ins"], 0);
}

// A switch the kernel never reported (the one away from a task it hides:
// 301 ran after 101 on cpu 0, then 101 again, unseen). 101's next
// switch-out shows the gap: it is counted, and 101 is taken to have run from
// cpu 0's previous recorded switch, so its sample at 2600 is in a run.
TEST(SchedConsistency, AMissingSwitchInIsCountedAndBoundedByTheCpu) {
  testing::TraceBuilder b;
  b.setTarget("pid 100");
  b.thread(101, "worker");
  b.unnamedThread(301, 300);
  b.sched(1000, 0, 0, 0, 101);
  b.sched(2000, 0, 101, 0, 301);  // preempted by 301
  b.sched(3000, 0, 101, 1, 0);    // "301 -> 101" at ~2200 was never reported
  b.setEnd(4000);
  auto path = b.write();
  ASSERT_TRUE(path);
  nlohmann::json doc = runReportJson(runSched, {*path});
  ASSERT_EQ(doc["threads"].size(), 1u);
  EXPECT_EQ(doc["schedule"]["missing_switch_ins"], 1);
  EXPECT_EQ(doc["threads"][0]["running_ns"], 1000 + 1000);
  EXPECT_EQ(doc["threads"][0]["blocked_ns"], 1000);
  auto text = testing::runReport(runSched, {*path});
  EXPECT_NE(text.output.find("1 switch-ins of followed threads are missing"), std::string::npos)
      << text.output;
}

// The running time of all threads never exceeds duration x cpus, whatever
// the rows say (here a thread of a -a trace that left cpu 0 unseen: its
// switch-out is missing, and its run is not stretched to the end).
TEST(SchedConsistency, RunningNeverExceedsTheCpus) {
  testing::TraceBuilder b;
  b.setTarget("all");
  b.thread(101, "a");
  b.thread(102, "b");
  b.thread(103, "hidden");
  b.sched(0, 0, 0, 0, 101);
  b.sched(1000, 0, 101, 1, 103);  // 103 runs; "103 -> 102" is never reported
  b.sched(2000, 0, 102, 1, 0);    // 102 leaves cpu 0
  b.setEnd(1'000'000);
  auto path = b.write();
  ASSERT_TRUE(path);
  nlohmann::json doc = runReportJson(runSched, {*path, "--limit", "0"});
  EXPECT_LE(doc["running_total_ns"].get<uint64_t>(), doc["cpu_capacity_ns"].get<uint64_t>());
  EXPECT_EQ(doc["running_total_ns"], 2000);
  EXPECT_EQ(doc["schedule"]["missing_switch_outs"], 1);
  EXPECT_EQ(doc["schedule"]["missing_switch_ins"], 1);
}

}  // namespace
}  // namespace incise::analyzer
