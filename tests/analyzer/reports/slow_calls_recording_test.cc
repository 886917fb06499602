// End to end: record latency_story's timed_call with real BPF (--trace, the
// scheduler on), then check that `incise correlate`'s slow calls split each
// slow call the way the workload measured it: at least its thread's CPU time
// inside the call on-CPU, at least its sleep blocked, and the parts adding up
// to the call.
// Label "integration": skips without root/BPF, fails instead when CI=true.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/analyzer/reports/report_json_runner.h"
#include "tests/recorder/locks_recording.h"

namespace incise::analyzer {
int runCorrelate(const std::vector<std::string>& args);

namespace {

using incise::testing::record;
using incise::testing::Recording;
using incise::testing::RemoveOnExit;

const std::string kLatencyStory = INCISE_WORKLOADS_DIR "/latency_story";

TEST(SlowCallsRecording, EachSlowCallSplitsIntoItsCpuAndItsSleep) {
  INCISE_REQUIRE_RECORDING();
  constexpr uint64_t kSlowCalls = 10, kSleepUs = 4000, kSpinUs = 3000;
  // --sched-min-block 0: every block written, so no short sleep reads as running.
  Recording run = record({"--locks", "off", "-F", "99", "--sched-min-block", "0", "--trace",
                          kLatencyStory + ":timed_call"},
                         {kLatencyStory, "--calls", std::to_string(kSlowCalls * 10), "--slow-every",
                          "10", "--slow-us", std::to_string(kSleepUs), "--slow-spin-us",
                          std::to_string(kSpinUs), "--sleeps-1ms", "0", "--sleeps-10ms", "0"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  ASSERT_EQ(run.value("slow_calls"), kSlowCalls) << run.workload_stdout;
  const uint64_t cpu_min = run.value("slow_cpu_ns.min");
  ASSERT_GE(cpu_min, kSpinUs * 1000) << run.workload_stdout;

  nlohmann::json doc;
  ASSERT_EQ(incise::analyzer::testing::runReportJson(
                runCorrelate, {run.trace_path, "--slow-calls", std::to_string(kSlowCalls)}, doc),
            0);
  ASSERT_FALSE(doc.is_discarded());
  const auto& calls = doc["slow_calls"];
  ASSERT_EQ(calls.size(), kSlowCalls) << calls.dump(2);
  for (const auto& call : calls) {
    SCOPED_TRACE(call.dump());
    EXPECT_EQ(call["name"], "timed_call");
    EXPECT_EQ(call["tid"], run.value("tid"));
    const uint64_t duration = call["duration_ns"];
    const uint64_t on_cpu = call["on_cpu_ns"], runnable = call["runnable_ns"];
    const uint64_t blocked = call["blocked_ns"], lock_wait = call["lock_wait_ns"];
    const uint64_t unobserved = call["unobserved_ns"];
    EXPECT_EQ(on_cpu + runnable + blocked + lock_wait + unobserved, duration);
    EXPECT_EQ(unobserved, 0u);
    EXPECT_EQ(lock_wait, 0u);
    // The slow calls are the spinning and sleeping ones: at least both.
    EXPECT_GE(duration, (kSleepUs + kSpinUs) * 1000);
    // Its CPU time ran on-CPU. Not a bound from above: on-CPU is the time the
    // thread was scheduled on a CPU, which in a VM includes time the host ran
    // something else on that vCPU (steal) and interrupts, both left out of
    // the thread's CPU clock.
    EXPECT_GE(on_cpu, cpu_min * 9 / 10);
    // The sleep is blocked time: from the switch-out inside nanosleep to the
    // timer's wake-up, as long as asked less the syscall's entry.
    EXPECT_GE(blocked, kSleepUs * 1000 * 95 / 100);
    EXPECT_FALSE(call["short_blocks_summarized"].get<bool>());
  }
}

}  // namespace
}  // namespace incise::analyzer
