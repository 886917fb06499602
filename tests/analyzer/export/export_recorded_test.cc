// End to end on real recordings (label "integration": needs root and BPF):
// bundled workloads and a shell loop recorded with real BPF, then every
// export and the scheduler reports checked for what must always hold:
//   - the Chrome export passes the strict Trace Event checker (no
//     overlapping slices, every CPU sample inside a running slice of its
//     thread, every track named);
//   - sched: the running time of all threads stays within duration x CPUs,
//     and each thread's running + runnable + blocked within its lifetime;
//   - offcpu's off-CPU time of a thread equals sched's runnable + blocked;
//   - the speedscope export opens on its busiest thread, and speedscope's own
//     app imports both exports without a warning (tools/clients: skipped
//     without node and chromium, required under CI=true);
//   - `-d 2` gives a trace of 2 s (counted from when the sources record).
#include <gtest/gtest.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/analyzer/clients/client_run.h"
#include "tests/analyzer/export/export_test_files.h"
#include "tests/analyzer/export/trace_event_checker.h"
#include "tests/analyzer/reports/report_json_runner.h"
#include "tests/recorder/locks_recording.h"

namespace incise::analyzer {
int runSched(const std::vector<std::string>& args);
int runOffcpu(const std::vector<std::string>& args);
int info(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

namespace {

using incise::testing::record;
using incise::testing::Recording;
using incise::testing::RemoveOnExit;
using testing::ExportedFile;

const std::string kWorkloads = INCISE_WORKLOADS_DIR;

struct Workload {
  std::string name;
  std::vector<std::string> options;
  std::vector<std::string> command;
};

// Short runs of what the integration tests record, plus a shell loop of
// short-lived processes (exits, forks, execs, bystanders on every switch).
// The shell counts between its children: a child of ~1 ms never reaches an
// inherited cpu-clock period, and on an idle machine the loop alone can end
// before the shell's own counter gives one sample.
std::vector<Workload> workloads() {
  return {
      {"cpu_shares", {"-F", "499"}, {kWorkloads + "/cpu_shares", "--seconds", "1"}},
      {"sleeper", {"-F", "499"}, {kWorkloads + "/sleeper"}},
      {"forker", {"-F", "499"}, {kWorkloads + "/forker"}},
      {"lock_story",
       {"-F", "499", "--locks", "all"},
       {kWorkloads + "/lock_story", "--threads", "4", "--iterations", "1500", "--hogs", "1"}},
      {"shell_loop",
       {"-F", "499"},
       {"/bin/sh", "-c",
        "i=0; while [ $i -lt 200 ]; do /bin/true; j=0; while [ $j -lt 1000 ]; do j=$((j+1)); "
        "done; i=$((i+1)); done"}},
  };
}

nlohmann::json parse(const std::string& text) {
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

class RecordedExports : public ::testing::TestWithParam<Workload> {};

TEST_P(RecordedExports, ChromeSchedAndSpeedscopeAddUp) {
  INCISE_REQUIRE_RECORDING();
  const Workload& w = GetParam();
  Recording run = record(w.options, w.command);
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;

  ExportedFile chrome("chrome");
  ASSERT_EQ(chrome.run(run.trace_path), 0);
  nlohmann::json doc = parse(chrome.contents());
  ASSERT_FALSE(doc.is_discarded());
  testing::TraceEventCheck check = testing::checkTraceEvents(doc);
  EXPECT_TRUE(check.ok()) << w.name << ": " << check.summary() << "\n" << doc["otherData"].dump(1);
  EXPECT_GT(check.slices, 0u);
  EXPECT_GT(check.samples, 0u);

  nlohmann::json sched;
  ASSERT_EQ(testing::runReportJson(runSched, {run.trace_path, "--limit", "0"}, sched), 0);
  uint64_t duration = sched["header"]["duration_ns"];
  uint64_t running = 0;
  std::map<uint64_t, uint64_t> waiting;  // tid -> runnable + blocked
  for (const auto& t : sched["threads"]) {
    SCOPED_TRACE(t.dump());
    uint64_t spent = t["running_ns"].get<uint64_t>() + t["runnable_ns"].get<uint64_t>() +
                     t["blocked_ns"].get<uint64_t>();
    uint64_t end = t.contains("exit_ns") ? t["exit_ns"].get<uint64_t>() : duration;
    EXPECT_LE(spent, end - t["first_ns"].get<uint64_t>());
    EXPECT_FALSE(t["bystander"].get<bool>());
    running += t["running_ns"].get<uint64_t>();
    waiting[t["tid"]] = t["runnable_ns"].get<uint64_t>() + t["blocked_ns"].get<uint64_t>();
  }
  EXPECT_EQ(sched["running_total_ns"], running);
  EXPECT_LE(running, sched["cpu_capacity_ns"].get<uint64_t>());
  EXPECT_GT(running, 0u);

  // offcpu's spans of a thread add up to its runnable + blocked.
  nlohmann::json offcpu;
  ASSERT_EQ(testing::runReportJson(runOffcpu, {run.trace_path, "--limit", "0"}, offcpu), 0);
  uint64_t off_total = offcpu["off_cpu_ns"]["blocked"].get<uint64_t>() +
                       offcpu["off_cpu_ns"]["preempted"].get<uint64_t>();
  uint64_t waiting_total = 0;
  for (const auto& [tid, ns] : waiting) waiting_total += ns;
  // Time a thread waited before its first switch (a new thread, woken and
  // then switched in) is runnable in sched but opens no off-CPU span (there
  // was no switch-out): off-CPU <= waiting, equal without new threads.
  EXPECT_LE(off_total, waiting_total);
  if (w.name != "shell_loop" && w.name != "forker") {
    EXPECT_GE(off_total, waiting_total * 9 / 10);
  }

  ExportedFile speedscope("speedscope");
  ASSERT_EQ(speedscope.run(run.trace_path), 0);
  nlohmann::json profile = parse(speedscope.contents());
  ASSERT_FALSE(profile.is_discarded());
  size_t busiest = 0;
  uint64_t most = 0;
  for (size_t i = 0; i < profile["profiles"].size(); ++i) {
    uint64_t weight = profile["profiles"][i]["endValue"];
    if (weight > most) {
      most = weight;
      busiest = i;
    }
  }
  EXPECT_EQ(profile["activeProfileIndex"], busiest);

  std::string why_not = incise::testing::clientsUnavailableReason();
  if (!why_not.empty()) {
    if (incise::testing::clientsRequired()) FAIL() << "CI=true but " << why_not;
    std::cerr << "speedscope's app not run: " << why_not << "\n";
    return;
  }
  std::string error;
  nlohmann::json pages =
      incise::testing::runClient("check_speedscope.js", {chrome.path(), speedscope.path()}, &error);
  ASSERT_TRUE(pages.is_array() && pages.size() == 2u) << error;
  for (const auto& page : pages) {
    EXPECT_TRUE(page["warnings"].empty()) << page.dump(1);
    EXPECT_TRUE(page["errors"].empty()) << page.dump(1);
  }
}

INSTANTIATE_TEST_SUITE_P(Workloads, RecordedExports, ::testing::ValuesIn(workloads()),
                         [](const auto& info) { return info.param.name; });

// -d counts from when the sources record, and the trace ends when recording
// stops: a 2 s recording is a 2 s trace (not 2 s plus the start-up).
TEST(RecordedDuration, DashDTwoGivesATwoSecondTrace) {
  INCISE_REQUIRE_RECORDING();
  Recording run = record({"-d", "2", "-F", "99"}, {"/bin/sleep", "30"});
  RemoveOnExit cleanup{run.trace_path};
  EXPECT_NE(run.recorder_stderr.find("incise-record: recording"), std::string::npos)
      << run.recorder_stderr;
  std::ostringstream out, err;
  ASSERT_EQ(info({run.trace_path, "--json"}, out, err), 0) << err.str() << run.recorder_stderr;
  uint64_t duration = parse(out.str())["duration_ns"];
  EXPECT_GE(duration, 2'000'000'000u);
  // The loop wakes at the deadline; draining the rings adds milliseconds.
  EXPECT_LT(duration, 2'250'000'000u) << run.recorder_stderr;
}

}  // namespace
}  // namespace incise::analyzer
