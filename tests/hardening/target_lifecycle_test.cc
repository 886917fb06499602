// Targets that go away or change under the recorder: -p of a process that
// exits (the recording ends with it, nothing hangs) and one that execs (the
// new image's samples are symbolized).
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <thread>

#include "tests/hardening/child_process.h"
#include "tests/hardening/trace_check.h"
#include "tests/recorder/recorder_test_support.h"

namespace incise::testing {
namespace {

// What incise-record prints once its sources are attached.
constexpr char kRecordingLine[] = "incise-record: recording ";

TEST(TargetLifecycle, RecordingEndsWhenTheOnlyTargetExits) {
  INCISE_REQUIRE_RECORDING();
  std::string path = tempTracePath("target-exits.trace");
  ChildProcess workload = ChildProcess::start(
      {INCISE_WORKLOADS_DIR "/cpu_shares", "--seconds", "60", "--threads", "1"});
  ASSERT_GT(workload.pid(), 0);
  ChildProcess recorder = ChildProcess::start(
      {INCISE_RECORD_BIN, "-F", "999", "-o", path, "-p", std::to_string(workload.pid())});
  ASSERT_TRUE(recorder.waitForErrors(kRecordingLine, std::chrono::seconds(30)))
      << recorder.errors();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  // The test ends and reaps the workload, as a shell would; the recorder must notice.
  workload.signal(SIGTERM);
  ASSERT_EQ(workload.waitFor(std::chrono::seconds(10)), 128 + SIGTERM);
  std::optional<int> status = recorder.waitFor(std::chrono::seconds(10));
  ASSERT_TRUE(status.has_value()) << "the recorder kept running after its only target exited";
  EXPECT_EQ(*status, 0) << recorder.errors();
  TraceCheck check = checkTrace(path);
  ASSERT_TRUE(check.problem.empty()) << check.problem;
  EXPECT_TRUE(check.used_footer);
  EXPECT_GT(check.rows[format::EventKind::kCpuSample], 300u);
}

TEST(TargetLifecycle, ExecMidRecordingIsSymbolizedAsTheNewImage) {
  INCISE_REQUIRE_RECORDING();
  std::string path = tempTracePath("target-execs.trace");
  // A shell that waits until the recorder records, then replaces itself with the workload:
  // same pid.
  std::string go = path + ".go";
  ChildProcess target =
      ChildProcess::start({"/bin/sh", "-c",
                           "while [ ! -e '" + go +
                               "' ]; do sleep 0.02; done; exec " INCISE_WORKLOADS_DIR
                               "/cpu_shares --seconds 2 --threads 1"});
  ASSERT_GT(target.pid(), 0);
  ChildProcess recorder = ChildProcess::start(
      {INCISE_RECORD_BIN, "-F", "999", "-o", path, "-p", std::to_string(target.pid())});
  ASSERT_TRUE(recorder.waitForErrors(kRecordingLine, std::chrono::seconds(30)))
      << recorder.errors();
  std::ofstream(go).put('\n');
  ASSERT_EQ(target.waitFor(std::chrono::seconds(15)), 0);
  std::optional<int> status = recorder.waitFor(std::chrono::seconds(10));
  ASSERT_TRUE(status.has_value()) << "the recorder kept running after its target exited";
  EXPECT_EQ(*status, 0) << recorder.errors();

  TraceView trace(path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  auto pid = static_cast<uint32_t>(target.pid());
  size_t samples = 0, hot = 0;
  for (const auto& s : trace.rows<format::CpuSample>()) {
    if (s.pid != pid) continue;
    ++samples;
    std::string leaf = trace.leafUserFunction(pid, s.stack_id);
    if (leaf == "hot_a" || leaf == "hot_b" || leaf == "hot_c") ++hot;
  }
  EXPECT_GT(samples, 300u);
  EXPECT_GT(hot, samples / 2) << "samples after the exec resolve in the new image";
  bool exec_seen = false;
  for (const auto& e : trace.rows<format::ProcessEvent>()) {
    if (e.pid == pid && e.event == static_cast<uint64_t>(format::ProcessEventType::kExec)) {
      exec_seen = true;
    }
  }
  EXPECT_TRUE(exec_seen);
}

}  // namespace
}  // namespace incise::testing
