// End to end: record the bundled ping_pong workload (two threads handing a
// byte back and forth over pipes, so nearly every block is a short sleep that
// ends on either cpu) with real BPF, once with short sleeps summarised (the
// default --sched-min-block) and once with every block written. The
// summarised recording writes a fraction of the switch rows, and `incise
// sched` and `incise offcpu` still give each thread the switches the kernel
// counted for it and the off-CPU time its own clock measured.
// Label "integration": skips without root/BPF, fails instead when CI=true.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/analyzer/reports/report_json_runner.h"
#include "tests/recorder/locks_recording.h"

namespace incise::analyzer {
int runSched(const std::vector<std::string>& args);
int runOffcpu(const std::vector<std::string>& args);

namespace {

using incise::testing::record;
using incise::testing::Recording;
using incise::testing::RemoveOnExit;
using incise::testing::TraceView;

const std::string kPingPong = INCISE_WORKLOADS_DIR "/ping_pong";
constexpr uint64_t kRounds = 20000;
// Switches a thread may make after reading its own counts (its exit).
constexpr uint64_t kSwitchesAfterCount = 8;

struct Recorded {
  Recording run;
  uint64_t switch_rows = 0;
  uint64_t half_elided_rows = 0;
  nlohmann::json sched;
  nlohmann::json offcpu;
};

void recordPingPong(const std::vector<std::string>& options, Recorded& out) {
  std::vector<std::string> args = {"--locks", "off", "-F", "19"};
  args.insert(args.end(), options.begin(), options.end());
  out.run = record(args, {kPingPong, "--rounds", std::to_string(kRounds)});
  ASSERT_EQ(out.run.exit_code, 0) << out.run.recorder_stderr;
  ASSERT_EQ(out.run.value("round_trips"), kRounds) << out.run.workload_stdout;
  TraceView trace(out.run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  for (const format::SchedSwitch& row : trace.rows<format::SchedSwitch>()) {
    ++out.switch_rows;
    if ((row.elided & (format::switch_elided::kPrevOut | format::switch_elided::kNextIn)) != 0)
      ++out.half_elided_rows;
  }
  ASSERT_EQ(testing::runReportJson(runSched, {out.run.trace_path, "--limit", "0"}, out.sched), 0);
  ASSERT_EQ(testing::runReportJson(runOffcpu, {out.run.trace_path}, out.offcpu), 0);
}

const nlohmann::json* threadRow(const nlohmann::json& sched, uint64_t tid) {
  for (const auto& row : sched["threads"])
    if (row["tid"] == tid) return &row;
  return nullptr;
}

// Each player's switches as its kernel counted them, and its off-CPU time
// within what its clock measured around its reads.
void expectPlayersMatchTheirOwnCounts(const Recorded& r) {
  const Recording& run = r.run;
  for (const std::string player : {"ping", "pong"}) {
    SCOPED_TRACE(player);
    const nlohmann::json* row = threadRow(r.sched, run.value(player + "_tid"));
    ASSERT_NE(row, nullptr) << r.sched.dump(1);
    const uint64_t voluntary = run.value(player + "_voluntary_switches");
    const uint64_t involuntary = run.value(player + "_involuntary_switches");
    const uint64_t read_wait_ns = run.value(player + "_read_wait_ns");
    // Nearly every read blocks: the switches are the round trips.
    ASSERT_GE(voluntary, kRounds / 2) << run.workload_stdout;
    EXPECT_GE((*row)["voluntary_switches"].get<uint64_t>(), voluntary) << row->dump();
    EXPECT_LE((*row)["voluntary_switches"].get<uint64_t>(), voluntary + kSwitchesAfterCount)
        << row->dump();
    EXPECT_GE((*row)["involuntary_switches"].get<uint64_t>(), involuntary) << row->dump();
    EXPECT_LE((*row)["involuntary_switches"].get<uint64_t>(), involuntary + kSwitchesAfterCount)
        << row->dump();
    // Blocked is time inside read (a summarised sleep counts its wake-up's
    // runqueue wait as blocked: still inside read). Off the cpu is most of
    // each read: the rest is the syscall's own on-CPU time.
    const uint64_t blocked = (*row)["blocked_ns"], runnable = (*row)["runnable_ns"];
    EXPECT_LE(blocked, read_wait_ns) << row->dump() << "\n" << run.workload_stdout;
    EXPECT_GE(blocked + runnable, read_wait_ns * 4 / 10) << row->dump() << "\n"
                                                         << run.workload_stdout;
  }
  // offcpu's off-CPU time is sched's runnable + blocked (both read the
  // summaries back) less what a new thread waited before its first switch-in,
  // which has no switch-out to start an off-CPU span.
  uint64_t sched_off_cpu = 0;
  for (const auto& row : r.sched["threads"])
    sched_off_cpu += row["blocked_ns"].get<uint64_t>() + row["runnable_ns"].get<uint64_t>();
  const nlohmann::json& off_cpu = r.offcpu["off_cpu_ns"];
  const uint64_t offcpu_total =
      off_cpu["blocked"].get<uint64_t>() + off_cpu["preempted"].get<uint64_t>();
  EXPECT_LE(offcpu_total, sched_off_cpu);
  EXPECT_GE(offcpu_total, sched_off_cpu / 100 * 97);
}

TEST(PingPongRecording, SummarisedShortSleepsWriteFewRowsAndKeepEveryThreadsTotals) {
  INCISE_REQUIRE_RECORDING();
  Recorded summarised, whole;
  ASSERT_NO_FATAL_FAILURE(recordPingPong({}, summarised));
  RemoveOnExit summarised_file{summarised.run.trace_path};
  ASSERT_NO_FATAL_FAILURE(recordPingPong({"--sched-min-block", "0"}, whole));
  RemoveOnExit whole_file{whole.run.trace_path};

  // Every block written: no half elided; two sleeps a round trip.
  EXPECT_EQ(whole.half_elided_rows, 0u);
  EXPECT_GE(whole.switch_rows, kRounds * 2);
  EXPECT_GT(summarised.half_elided_rows, 0u);
  EXPECT_EQ(whole.sched["schedule"]["summarized_blocks"], 0u);
  // Most of the players' sleeps come back from summaries.
  EXPECT_GT(summarised.sched["schedule"]["summarized_blocks"].get<uint64_t>(), kRounds);
  EXPECT_LT(summarised.switch_rows * 4, whole.switch_rows)
      << "summarised " << summarised.switch_rows << " rows, whole " << whole.switch_rows;

  for (const Recorded* r : {&summarised, &whole}) {
    SCOPED_TRACE(r == &whole ? "every block written" : "short sleeps summarised");
    expectPlayersMatchTheirOwnCounts(*r);
  }
}

}  // namespace
}  // namespace incise::analyzer
