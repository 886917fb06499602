// `incise correlate` on the lock story trace: exact JSON numbers for the
// preempted holder, the faults and samples under the lock, and the wake-up
// chain of the longest wait.
#include <gtest/gtest.h>

#include "tests/analyzer/reports/lock_story_trace.h"
#include "tests/analyzer/reports/report_json_runner.h"

namespace incise::analyzer {
int runCorrelate(const std::vector<std::string>& args);

namespace {

using testing::buildLockStory;
using testing::runReportJson;
using testing::TraceBuilder;

class CorrelateReport : public ::testing::TestWithParam<bool> {};

TEST(CorrelateReport, AllModeStory) {
  TraceBuilder b;
  buildLockStory(b, false);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  nlohmann::json doc;
  ASSERT_EQ(runReportJson(runCorrelate, {*path}, doc), 0);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["lock_mode"], "all");

  ASSERT_EQ(doc["preemption"].size(), 1u);
  const nlohmann::json& p = doc["preemption"][0];
  EXPECT_EQ(p["holder"]["name"], "holder");
  EXPECT_EQ(p["holder"]["tid"], 201);
  EXPECT_EQ(p["lock"]["address"], "0x5000");
  EXPECT_EQ(p["site"], "update_account");
  EXPECT_EQ(p["sections"], 1);
  EXPECT_EQ(p["held_ns"], 4000);
  EXPECT_EQ(p["preempted_switches"], 1);
  EXPECT_EQ(p["blocked_switches"], 1);
  EXPECT_EQ(p["off_cpu_preempted_ns"], 1000);
  EXPECT_EQ(p["off_cpu_blocked_ns"], 500);
  EXPECT_EQ(p["waiters_while_off_cpu"], 2);
  EXPECT_EQ(p["waiter_ns_while_off_cpu"], 2000);  // waiter-1 1500, waiter-2 500
  EXPECT_EQ(p["waiter_ns_while_held"], 5300);

  ASSERT_GE(doc["inside_sections"].size(), 1u);
  const nlohmann::json& in = doc["inside_sections"][0];
  EXPECT_EQ(in["holder"]["name"], "holder");
  EXPECT_EQ(in["faults"], 2);
  EXPECT_EQ(in["thread_faults"], 4);
  EXPECT_DOUBLE_EQ(in["faults_percent_of_thread"].get<double>(), 50.0);
  EXPECT_EQ(in["samples"], 2);
  EXPECT_EQ(in["thread_samples"], 3);
  EXPECT_DOUBLE_EQ(in["samples_percent_of_thread"].get<double>(), 66.67);
  ASSERT_EQ(in["fault_stacks"].size(), 1u);
  EXPECT_EQ(in["fault_stacks"][0]["count"], 2);
  EXPECT_EQ(in["fault_stacks"][0]["stack"], "memset <- update_account <- worker_main");

  ASSERT_EQ(doc["wake_chains"].size(), 2u);
  const nlohmann::json& link = doc["wake_chains"][0]["links"][0];
  EXPECT_EQ(link["waiter"]["name"], "waiter-1");
  EXPECT_EQ(link["wait_ns"], 3500);
  EXPECT_EQ(link["wait_start_ns"], 1500);
  EXPECT_EQ(link["source"], "wakeup");
  EXPECT_EQ(link["waker"]["name"], "holder");
  EXPECT_EQ(link["waker_stack"], "pthread_mutex_unlock <- update_account <- worker_main");

  ASSERT_GE(doc["summary"].size(), 3u);
  const std::string first = doc["summary"][0];
  EXPECT_NE(first.find("holder (201) held lock 0x5000 (site: update_account)"), std::string::npos)
      << first;
  EXPECT_NE(first.find("switched out 2 times inside it (1 preempted, 1 blocked)"),
            std::string::npos)
      << first;
  EXPECT_NE(first.find("2 waiters lost 2.000 us waiting meanwhile"), std::string::npos) << first;
  const std::string faults = doc["summary"][1];
  EXPECT_EQ(faults.rfind("50% of the page faults in thread holder (201) (2 of 4)", 0), 0u)
      << faults;
}

TEST(CorrelateReport, ContendedModeInfersThePreemptedHolder) {
  TraceBuilder b;
  buildLockStory(b, true);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  nlohmann::json doc;
  ASSERT_EQ(runReportJson(runCorrelate, {*path}, doc), 0);
  EXPECT_EQ(doc["lock_mode"], "contended");
  ASSERT_EQ(doc["preemption"].size(), 1u);
  const nlohmann::json& p = doc["preemption"][0];
  // Inferred: holder held the lock from waiter-1's wait start [1500, 5000).
  EXPECT_EQ(p["holder"]["name"], "holder");
  EXPECT_TRUE(p["inferred"].get<bool>());
  EXPECT_EQ(p["held_ns"], 3500);
  EXPECT_EQ(p["off_cpu_preempted_ns"], 1000);
  EXPECT_EQ(p["off_cpu_blocked_ns"], 500);
  EXPECT_EQ(p["waiter_ns_while_off_cpu"], 2000);
  const nlohmann::json& in = doc["inside_sections"][0];
  EXPECT_EQ(in["faults"], 1);  // 2500; the one at 1000 came before the inferred start
  EXPECT_EQ(in["thread_faults"], 4);
}

TEST(CorrelateReport, TimeFilterNarrowsTheStory) {
  TraceBuilder b;
  buildLockStory(b, false);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  nlohmann::json doc;
  // Only events from 6 us on: no lock rows start there.
  ASSERT_EQ(runReportJson(runCorrelate, {*path, "--time", "0.000006.."}, doc), 0);
  EXPECT_TRUE(doc["preemption"].empty());
  EXPECT_EQ(doc["summary"][0], "No lock events: nothing to correlate.");
}

}  // namespace
}  // namespace incise::analyzer
