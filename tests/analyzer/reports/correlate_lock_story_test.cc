// End to end: record the bundled lock_story workload with real BPF, then
// check that `incise correlate` finds what the workload knows it did: a
// holder preempted inside the critical section (CPU hogs compete with
// burn_cpu_in_lock) and page faults under the lock (touch_fresh_pages);
// that the story never blames the main thread's pthread_join, shows each
// wait of the wake chains once, stays a short report, and that a filter on
// one worker keeps the other holders that made it wait.
// Label "integration": skips without root/BPF, fails instead when CI=true.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "tests/analyzer/reports/report_json_runner.h"
#include "tests/analyzer/reports/report_runner.h"
#include "tests/recorder/locks_recording.h"

namespace incise::analyzer {
int runCorrelate(const std::vector<std::string>& args);

namespace {

using incise::testing::record;
using incise::testing::Recording;
using incise::testing::RemoveOnExit;

const std::string kLockStory = INCISE_WORKLOADS_DIR "/lock_story";

std::string hex(uint64_t value) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(value));
  return buffer;
}

void expectTheStory(const std::string& lock_mode) {
  Recording run = record({"--locks", lock_mode, "--page-faults", "-F", "499"},
                         {kLockStory, "--threads", "4", "--iterations", "1500", "--hogs", "2",
                          "--burn-every", "100", "--fault-every", "25"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  ASSERT_TRUE(run.has("mutex_address")) << run.workload_stdout;
  ASSERT_GT(run.value("minor_faults_in_lock"), 0u) << run.workload_stdout;
  ASSERT_GT(run.value("involuntary_switches_in_lock"), 0u)
      << "the workload itself saw no preemption inside the lock: " << run.workload_stdout;
  const std::string mutex = hex(run.value("mutex_address"));

  nlohmann::json doc;
  ASSERT_EQ(incise::analyzer::testing::runReportJson(
                runCorrelate, {run.trace_path, "--pid", std::to_string(run.value("pid"))}, doc),
            0);
  ASSERT_FALSE(doc.is_discarded());
  // In mode `all` futex waits on other words (pthread_join, condvars) are
  // recorded too, so the rows can be "mixed"; the header says what was asked.
  EXPECT_EQ(doc["recorded_lock_mode"], lock_mode);

  uint64_t preempted = 0;
  for (const auto& p : doc["preemption"]) {
    if (p["lock"]["address"] == mutex) preempted += p["preempted_switches"].get<uint64_t>();
  }
  EXPECT_GT(preempted, 0u) << "no preempted holder of " << mutex << " found:\n"
                           << doc["summary"].dump(2);

  uint64_t faults = 0;
  bool fault_stack_named = false;
  for (const auto& in : doc["inside_sections"]) {
    if (in["lock"]["address"] != mutex) continue;
    faults += in["faults"].get<uint64_t>();
    for (const auto& stack : in["fault_stacks"]) {
      fault_stack_named |=
          stack["stack"].get<std::string>().find("touch_fresh_pages") != std::string::npos;
    }
  }
  EXPECT_GT(faults, 0u) << "no page faults under " << mutex << ":\n" << doc["summary"].dump(2);
  EXPECT_TRUE(fault_stack_named) << doc["inside_sections"].dump(2);

  // Each wait of the wake chains is one node of the tree.
  std::set<std::pair<uint64_t, uint64_t>> shown;
  for (const auto& node : doc["wake_tree"]) {
    if (node.contains("see_chain")) continue;
    const nlohmann::json& link = node["link"];
    EXPECT_TRUE(
        shown.insert({link["waiter"]["tid"].get<uint64_t>(), link["wait_start_ns"].get<uint64_t>()})
            .second)
        << "a wait shown twice:\n"
        << doc["wake_tree"].dump(2);
  }
  if (lock_mode == "all") {
    // The joins of the workers are futex rows beside the mutex rows: never a lock.
    EXPECT_GE(doc["unblamed_waits"]["count"].get<uint64_t>(), 1u) << doc["notes"].dump(2);
    for (const char* table : {"preemption", "inside_sections"}) {
      for (const auto& p : doc[table]) EXPECT_NE(p["kind"], "futex") << p.dump(2);
    }
    for (const auto& chain : doc["wake_chains"]) {
      for (const auto& link : chain["links"]) EXPECT_NE(link["kind"], "futex") << link.dump(2);
    }
  }

  // The text: at most 10 findings, one line each.
  incise::analyzer::testing::ReportResult text =
      incise::analyzer::testing::runReport(runCorrelate, {run.trace_path});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  std::istringstream lines(text.output);
  size_t findings = 0;
  for (std::string line; std::getline(lines, line);) {
    if (std::regex_search(line, std::regex("^ +[0-9]+\\. "))) ++findings;
  }
  EXPECT_GE(findings, 1u) << text.output;
  EXPECT_LE(findings, 10u) << text.output;

  // One worker's story: another worker, outside the filter, held the mutex
  // while preempted and made it wait.
  std::string worker = std::to_string(run.list("worker_tids").front());
  ASSERT_EQ(incise::analyzer::testing::runReportJson(runCorrelate,
                                                     {run.trace_path, "--tid", worker}, doc),
            0);
  bool explained_by_another = false;
  for (const auto& p : doc["preemption"]) {
    explained_by_another |=
        !p["holder_in_focus"].get<bool>() && p["focus_waiter_ns_while_off_cpu"].get<uint64_t>() > 0;
  }
  EXPECT_TRUE(explained_by_another) << doc["preemption"].dump(2);
}

TEST(CorrelateLockStory, ModeAllFindsThePreemptedHolderAndTheFaultsUnderTheLock) {
  INCISE_REQUIRE_RECORDING();
  expectTheStory("all");
}

TEST(CorrelateLockStory, ContendedModeFindsThemFromInferredSections) {
  INCISE_REQUIRE_RECORDING();
  expectTheStory("contended");
}

}  // namespace
}  // namespace incise::analyzer
