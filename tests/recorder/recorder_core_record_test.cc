// incise-record on the bundled workloads, with real BPF: CPU shares, off-CPU
// time, following a forked child, the file mode, and salvage after kill -9.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <thread>

#include "tests/recorder/recorder_test_support.h"
#include "tests/workloads/workload_run.h"

namespace incise::testing {
namespace {

const std::string kWorkloads = INCISE_WORKLOADS_DIR;

WorkloadRun recordCommand(const std::string& trace, std::vector<std::string> recorder_args,
                          const std::string& workload, const std::vector<std::string>& args) {
  std::vector<std::string> all = {"-o", trace};
  all.insert(all.end(), recorder_args.begin(), recorder_args.end());
  all.push_back("--");
  all.push_back(kWorkloads + "/" + workload);
  all.insert(all.end(), args.begin(), args.end());
  return run_workload(INCISE_RECORD_BIN, all);
}

uint64_t monotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

pid_t spawn(const std::vector<std::string>& argv_strings) {
  std::vector<char*> argv;
  for (const auto& a : argv_strings) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return -1;
  return pid;
}

TEST(RecorderRecord, CpuSharesMatchTheWorkloadWithin5Points) {
  INCISE_REQUIRE_RECORDING();
  std::string path = tempTracePath("cpu_shares.trace");
  // Only the CPU-sample source: on this busy VM, every extra context-switch
  // event the recorder handles shifts cpu-clock samples towards
  // finish_task_switch (interrupts held off during the switch), which is
  // about sched tracing overhead, not about sample attribution.
  WorkloadRun run = recordCommand(path, {"-F", "999", "--no-sched", "--locks", "off"}, "cpu_shares",
                                  {"--seconds", "3"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  ASSERT_TRUE(run.has("pid"));
  uint32_t pid = static_cast<uint32_t>(run.number("pid"));

  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  TraceView trace(path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  EXPECT_TRUE(trace.reader().recovery().clean());
  std::map<std::string, double> samples;
  double total = 0;
  for (const auto& s : trace.rows<format::CpuSample>()) {
    if (s.pid != pid) continue;
    total += 1;
    samples[trace.leafUserFunction(pid, s.stack_id)] += 1;
  }
  // cpu-clock samples land on the workload in proportion to the CPU it got
  // (the machine may be busy): far fewer than its CPU time x 999 Hz means loss.
  double expected_samples = static_cast<double>(run.number("cpu_ns.process")) * 999 / 1e9;
  ASSERT_GT(total, 0.7 * expected_samples) << "samples of pid " << pid;
  for (const char* name : {"hot_a", "hot_b", "hot_c"}) {
    double expected = run.decimal(std::string("share.") + name);
    double measured = samples[name] / total;
    EXPECT_NEAR(measured, expected, 0.05) << name << ": " << samples[name] << " of " << total;
  }
}

TEST(RecorderRecord, SleeperOffCpuTimeWithin10Percent) {
  INCISE_REQUIRE_RECORDING();
  std::string path = tempTracePath("sleeper.trace");
  WorkloadRun run = recordCommand(path, {}, "sleeper", {});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  uint32_t tid = static_cast<uint32_t>(run.number("tid"));
  double slept = static_cast<double>(run.number("slept_ns"));
  ASSERT_GT(slept, 0);

  TraceView trace(path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  std::vector<format::SchedSwitch> switches = trace.rows<format::SchedSwitch>();
  std::sort(switches.begin(), switches.end(),
            [](const auto& a, const auto& b) { return a.time < b.time; });
  uint64_t blocked_since = 0;
  double blocked_ns = 0;
  size_t blocked_intervals = 0;
  for (const auto& s : switches) {
    if (s.prev_tid == tid && s.prev_state != 0) blocked_since = s.time;
    if (s.next_tid == tid && blocked_since) {
      blocked_ns += static_cast<double>(s.time - blocked_since);
      ++blocked_intervals;
      blocked_since = 0;
    }
  }
  EXPECT_GE(blocked_intervals, run.number("nanosleep_calls"));
  EXPECT_NEAR(blocked_ns, slept, slept * 0.10) << blocked_intervals << " blocked intervals";
}

TEST(RecorderRecord, CommandIsFollowedIntoForkedChildren) {
  INCISE_REQUIRE_RECORDING();
  std::string path = tempTracePath("forker.trace");
  WorkloadRun run = recordCommand(path, {"-F", "999"}, "forker", {"--exec"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  uint32_t child = static_cast<uint32_t>(run.number("child_pid"));
  uint32_t child_thread = static_cast<uint32_t>(run.number("child_thread_tid"));
  ASSERT_NE(child, 0u);

  TraceView trace(path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  size_t child_samples = 0, child_thread_samples = 0, child_burn = 0;
  for (const auto& s : trace.rows<format::CpuSample>()) {
    if (s.pid != child) continue;
    ++child_samples;
    if (s.tid == child_thread) ++child_thread_samples;
    if (trace.stackHasFunction(child, s.stack_id, "child_burn")) ++child_burn;
  }
  EXPECT_GT(child_samples, 20u);
  EXPECT_GT(child_thread_samples, 10u);
  EXPECT_GT(child_burn, child_samples / 4) << "samples of the exec'ed child resolve to child_burn";
  size_t child_switches = 0;
  for (const auto& s : trace.rows<format::SchedSwitch>())
    if (s.prev_pid == child) ++child_switches;
  EXPECT_GT(child_switches, 0u);
  bool fork_seen = false, exec_seen = false;
  for (const auto& e : trace.rows<format::ProcessEvent>()) {
    if (e.event == static_cast<uint64_t>(format::ProcessEventType::kFork) && e.peer_pid == child)
      fork_seen = true;
    if (e.event == static_cast<uint64_t>(format::ProcessEventType::kExec) && e.pid == child)
      exec_seen = true;
  }
  EXPECT_TRUE(fork_seen);
  EXPECT_TRUE(exec_seen);
}

TEST(RecorderRecord, KillNineLosesAtMostTheLastSecond) {
  INCISE_REQUIRE_RECORDING();
  std::string path = tempTracePath("killed.trace");
  pid_t workload = spawn({kWorkloads + "/cpu_shares", "--seconds", "8", "--threads", "1"});
  ASSERT_GT(workload, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  pid_t recorder =
      spawn({INCISE_RECORD_BIN, "-F", "999", "-o", path, "-p", std::to_string(workload)});
  ASSERT_GT(recorder, 0);
  // Start-up (BPF loading) takes 0.3 s on a quiet box and over 2 s on a loaded
  // one: count the recording from its first once-a-second flush (the file
  // grows past its header), then kill it 2.5 s later, mid-way between flushes.
  // The file is watched meanwhile: the last time it grew is the last flush the
  // kill can keep. What that flush wrote must reach to within a second of it.
  // (Measured from the flush, not from the kill: on a loaded box the recorder
  // can wait for a CPU, and then its flush is late, not its content stale.)
  auto fileSize = [&path] {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 ? st.st_size : off_t{0};
  };
  off_t header_size = 0;
  for (int i = 0; i < 400 && header_size == 0; ++i) {
    header_size = fileSize();
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  for (int i = 0; i < 800 && fileSize() <= header_size; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  off_t seen_size = fileSize();
  uint64_t last_growth = 0;
  size_t flushes_seen = 0;
  for (uint64_t until = monotonicNs() + 2'500'000'000ull; monotonicNs() < until;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (off_t size = fileSize(); size > seen_size) {
      seen_size = size;
      last_growth = monotonicNs();
      ++flushes_seen;
    }
  }
  ASSERT_GE(flushes_seen, 1u) << "no flush in the 2.5 s before the kill";
  kill(recorder, SIGKILL);
  waitpid(recorder, nullptr, 0);
  kill(workload, SIGKILL);
  waitpid(workload, nullptr, 0);

  TraceView trace(path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  EXPECT_FALSE(trace.reader().recovery().used_footer);
  uint64_t last = 0;
  size_t samples = 0;
  for (const auto& s : trace.rows<format::CpuSample>()) {
    last = std::max(last, s.time);
    ++samples;
  }
  EXPECT_GT(samples, 100u);
  EXPECT_GE(last + 1'000'000'000ull, last_growth)
      << "the salvaged samples end " << (last_growth - last) / 1e6
      << " ms before the last flush seen";
}

}  // namespace
}  // namespace incise::testing
