// Self-tests of the bundled workloads (tools/workloads/): each runs briefly
// and its printed counts must follow exactly from its options, because the
// recorder's integration tests compare traces against those counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "objfile/tls_variable.h"
#include "tests/workloads/workload_run.h"

namespace incise::testing {
namespace {

std::string workload(const std::string& name) {
  return std::string(INCISE_WORKLOADS_DIR) + "/" + name;
}

std::size_t count_list(const std::string& list) {
  if (list.empty()) return 0;
  std::size_t items = 1;
  for (char c : list) items += c == ',' ? 1 : 0;
  return items;
}

TEST(GoMutex, CountsFollowExactlyFromOptions) {
  if (!std::filesystem::exists(workload("go_mutex"))) {
    if (std::getenv("CI") && std::string(std::getenv("CI")) == "true")
      FAIL() << "go_mutex not built (no Go toolchain)";
    GTEST_SKIP() << "go_mutex not built (no Go toolchain)";
  }
  auto run = run_workload(workload("go_mutex"),
                          {"--goroutines", "3", "--rounds", "40", "--pages", "4", "--procs", "2"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  EXPECT_EQ(run.number("goroutines"), 3u);
  EXPECT_EQ(run.number("gomaxprocs"), 2u);
  EXPECT_EQ(run.number("acquisitions"), 3u * 40u);
  EXPECT_LE(run.number("contended_acquisitions"), run.number("acquisitions"));
  EXPECT_LE(run.number("contended_hold_ns"), run.number("hold_ns"));
  EXPECT_LE(run.number("hold_ns"), run.number("elapsed_ns"));
  EXPECT_LE(run.number("held_while_waited_ns"), run.number("hold_ns"));
  EXPECT_LE(run.number("holds_while_waited"), run.number("acquisitions"));
  EXPECT_EQ(run.text("mutex_address").rfind("0x", 0), 0u) << run.text("mutex_address");
  EXPECT_GE(count_list(run.text("holder_tids")), 1u);
  EXPECT_NE(run.number("pid"), 0u);
}

TEST(GoMutex, RefusesOptionsOutOfRange) {
  if (!std::filesystem::exists(workload("go_mutex"))) GTEST_SKIP() << "go_mutex not built";
  EXPECT_EQ(run_workload(workload("go_mutex"), {"--rounds", "0"}).exit_code, 2);
  EXPECT_EQ(run_workload(workload("go_mutex"), {"--procs", "-1"}).exit_code, 2);
}

TEST(GoWaits, CountsFollowExactlyFromOptions) {
  if (!std::filesystem::exists(workload("go_waits"))) {
    if (std::getenv("CI") && std::string(std::getenv("CI")) == "true")
      FAIL() << "go_waits not built (no Go toolchain)";
    GTEST_SKIP() << "go_waits not built (no Go toolchain)";
  }
  auto run = run_workload(workload("go_waits"),
                          {"--readers", "2", "--rounds", "10", "--waiters", "2", "--procs", "2"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  EXPECT_EQ(run.number("gomaxprocs"), 2u);
  EXPECT_EQ(run.number("reader_waits"), 2u * 10u);
  EXPECT_EQ(run.number("writer_waits"), 10u);
  // A waiter that finds the next broadcast already made does not wait.
  EXPECT_LE(run.number("cond_waits"), 2u * 10u);
  EXPECT_GE(run.number("cond_waits"), 1u);
  EXPECT_EQ(count_list(run.text("blocked_reader_goroutine_ids")), 2u * 10u);
  EXPECT_EQ(count_list(run.text("blocked_writer_goroutine_ids")), 10u);
  EXPECT_EQ(count_list(run.text("cond_waiter_goroutine_ids")), 2u);
  EXPECT_EQ(count_list(run.text("cond_signaller_goroutine_ids")), 1u);
  EXPECT_EQ(run.text("rwmutex_address").rfind("0x", 0), 0u) << run.text("rwmutex_address");
  EXPECT_EQ(run.text("cond_address").rfind("0x", 0), 0u) << run.text("cond_address");
}

TEST(GoWaits, RefusesOptionsOutOfRange) {
  if (!std::filesystem::exists(workload("go_waits"))) GTEST_SKIP() << "go_waits not built";
  EXPECT_EQ(run_workload(workload("go_waits"), {"--rounds", "0"}).exit_code, 2);
  EXPECT_EQ(run_workload(workload("go_waits"), {"--readers", "-1"}).exit_code, 2);
}

TEST(LockStory, CountsFollowExactlyFromOptions) {
  const std::uint64_t threads = 3;
  const std::uint64_t iterations = 2000;
  auto run =
      run_workload(workload("lock_story"),
                   {"--threads",      "3",  "--iterations",  "2000", "--trylock-every", "7",
                    "--fault-every",  "10", "--fault-pages", "2",    "--burn-every",    "0",
                    "--yield-every",  "50", "--hogs",        "1",    "--work",          "200",
                    "--outside-work", "200"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  EXPECT_EQ(run.number("trylock_calls"), threads * (iterations / 7));
  EXPECT_LE(run.number("trylock_acquired"), run.number("trylock_calls"));
  EXPECT_EQ(run.number("lock_calls") + run.number("trylock_acquired"), threads * iterations);
  EXPECT_EQ(run.number("unlock_calls"), threads * iterations);
  EXPECT_EQ(run.number("critical_sections"), threads * iterations);
  EXPECT_EQ(run.number("faulting_sections"), threads * (iterations / 10));
  EXPECT_EQ(run.number("pages_touched"), 2 * run.number("faulting_sections"));
  // Every touched page is fresh, so each costs at least one fault.
  EXPECT_GE(run.number("minor_faults_in_lock"), run.number("pages_touched"));
  EXPECT_EQ(run.number("yield_sections"), threads * (iterations / 50));
  EXPECT_EQ(run.number("burn_sections"), 0u);
  EXPECT_EQ(run.text("mutex_address").rfind("0x", 0), 0u) << run.text("mutex_address");
  EXPECT_NE(run.number("mutex_address"), 0u);
  EXPECT_EQ(count_list(run.text("worker_tids")), threads);
}

TEST(LockStory, BurningHolderIsPreemptedByHogs) {
  auto run =
      run_workload(workload("lock_story"),
                   {"--threads", "2", "--iterations", "40", "--burn-every", "10", "--burn-us",
                    "20000", "--fault-every", "0", "--yield-every", "0", "--hogs", "2"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  EXPECT_EQ(run.number("burn_sections"), 8u);
  // 20 ms of CPU while one hog per CPU competes cannot fit in one time slice.
  EXPECT_GE(run.number("preempted_sections"), 1u);
  EXPECT_GE(run.number("hold_ns_total"), 8u * 20'000'000u);
}

TEST(LockStory, RunsForSecondsWhenIterationsIsZero) {
  auto run = run_workload(workload("lock_story"), {"--threads", "2", "--iterations", "0",
                                                   "--seconds", "0.3", "--hogs", "0"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  EXPECT_GE(run.number("elapsed_ns"), 300'000'000u);
  EXPECT_GT(run.number("critical_sections"), 0u);
  EXPECT_EQ(run.number("critical_sections"), run.number("unlock_calls"));
}

TEST(WorkloadOptions, HelpSucceedsAndBadOptionsFailWithUsage) {
  for (const char* name :
       {"lock_story", "cpu_shares", "sleeper", "custom_lock", "forker", "omit_fp", "alloc_story"}) {
    auto help = run_workload(workload(name), {"--help"});
    EXPECT_EQ(help.exit_code, 0) << name;
    EXPECT_EQ(help.raw_stdout.rfind("usage: ", 0), 0u) << name << ": " << help.raw_stdout;
    EXPECT_EQ(run_workload(workload(name), {"--no-such-option"}).exit_code, 2) << name;
  }
  EXPECT_EQ(run_workload(workload("lock_story"), {"--threads", "x"}).exit_code, 2);
  EXPECT_EQ(run_workload(workload("lock_story"), {"--threads", "0"}).exit_code, 2);
  EXPECT_EQ(run_workload(workload("cpu_shares"), {"--seconds"}).exit_code, 2);
}

TEST(CpuShares, MeasuredCpuFollowsTheSixThreeOneWork) {
  auto run = run_workload(workload("cpu_shares"), {"--seconds", "1", "--threads", "2"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  const double a = static_cast<double>(run.number("cpu_ns.hot_a"));
  const double b = static_cast<double>(run.number("cpu_ns.hot_b"));
  const double c = static_cast<double>(run.number("cpu_ns.hot_c"));
  ASSERT_GT(c, 0);
  EXPECT_NEAR(a / c, 6.0, 1.0);
  EXPECT_NEAR(b / c, 3.0, 0.5);
  const double shares = run.decimal("share.hot_a") + run.decimal("share.hot_b") +
                        run.decimal("share.hot_c") + run.decimal("share.other");
  EXPECT_NEAR(shares, 1.0, 0.002);
  EXPECT_GT(run.decimal("share.hot_a"), 0.45);
  EXPECT_EQ(count_list(run.text("worker_tids")), 2u);
}

TEST(CpuShares, FixedWorkRunsExactlyTheRoundsAsked) {
  auto run = run_workload(workload("cpu_shares"),
                          {"--threads", "2", "--rounds", "20", "--round-steps", "10000"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  EXPECT_EQ(run.number("rounds"), 40u);
  EXPECT_EQ(run.number("round_steps"), 10000u);
}

TEST(FaultStory, EachFreshPageIsOneMinorFaultOfItsFunction) {
  auto run = run_workload(workload("fault_story"),
                          {"--pages-a", "300", "--pages-b", "100", "--burn-ms", "10"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  EXPECT_EQ(run.number("pages.touch_pages_a"), 300u);
  EXPECT_EQ(run.number("pages.touch_pages_b"), 100u);
  // Every page faults once; the function's own code or stack may add a fault or two.
  EXPECT_GE(run.number("minor_faults.touch_pages_a"), 300u);
  EXPECT_LE(run.number("minor_faults.touch_pages_a"), 303u);
  EXPECT_GE(run.number("minor_faults.touch_pages_b"), 100u);
  EXPECT_LE(run.number("minor_faults.touch_pages_b"), 103u);
  EXPECT_GE(run.number("minor_faults.process"), 400u);
  EXPECT_EQ(run_workload(workload("fault_story"), {"--pages-a", "99999999"}).exit_code, 2);
}

TEST(AllocStory, PrintsEachSitesBlocksTimesTheirSizeAndRefusesTooMuch) {
  auto run = run_workload(workload("alloc_story"),
                          {"--small-count", "1000", "--buffer-count", "10", "--new-count", "100",
                           "--signals", "3", "--leak-count", "5", "--scale", "2"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  EXPECT_EQ(run.number("count.make_small_records"), 2000u);
  EXPECT_EQ(run.number("bytes.make_small_records"), 2000u * 64);
  EXPECT_EQ(run.number("bytes.make_buffers"), 20u * 16384);
  EXPECT_EQ(run.number("bytes.make_objects_with_new"), 200u * 256);
  EXPECT_EQ(run.number("count.allocate_in_handler"), 6u * 8);  // 8 blocks a signal
  EXPECT_EQ(run.number("leaked_bytes"), 10u * 4096);
  EXPECT_EQ(run.number("allocations"), 2000u + 20 + 200 + 48 + 10);
  EXPECT_EQ(run_workload(workload("alloc_story"), {"--scale", "5000"}).exit_code, 2);
  EXPECT_EQ(run_workload(workload("alloc_story"), {"--leak-count", "99999999"}).exit_code, 2);
}

TEST(Sleeper, SleepsAtLeastWhatItWasAsked) {
  auto run =
      run_workload(workload("sleeper"), {"--count", "4", "--interval-ms", "20", "--pipe-ms", "60"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  EXPECT_EQ(run.number("nanosleep_calls"), 4u);
  EXPECT_GE(run.number("nanosleep_ns"), 80'000'000u);
  // The writer starts its 60 ms just before the read begins.
  EXPECT_GE(run.number("pipe_wait_ns"), 50'000'000u);
  EXPECT_EQ(run.number("slept_ns"), run.number("nanosleep_ns") + run.number("pipe_wait_ns"));
  EXPECT_EQ(run.number("tid"), run.number("pid"));
  EXPECT_NE(run.number("writer_tid"), run.number("tid"));
}

TEST(PingPong, PlaysEveryRoundAndCountsItsOwnWaitsAndSwitches) {
  auto run = run_workload(workload("ping_pong"), {"--rounds", "500"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  EXPECT_EQ(run.number("round_trips"), 500u);
  EXPECT_NE(run.number("ping_tid"), run.number("pong_tid"));
  EXPECT_NE(run.number("ping_tid"), run.number("pid"));
  for (const std::string player : {"ping", "pong"}) {
    // A player's reads are inside its own run.
    EXPECT_GT(run.number(player + "_read_wait_ns"), 0u) << player;
    EXPECT_LE(run.number(player + "_read_wait_ns"), run.number(player + "_elapsed_ns")) << player;
    EXPECT_LE(run.number(player + "_elapsed_ns"), run.number("elapsed_ns")) << player;
  }
}

TEST(CustomLock, CountsEveryAcquireAndRelease) {
  auto run = run_workload(workload("custom_lock"),
                          {"--threads", "3", "--iterations", "5000", "--work", "100"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  EXPECT_EQ(run.number("acquire_calls"), 15000u);
  EXPECT_EQ(run.number("release_calls"), 15000u);
  EXPECT_LE(run.number("contended_acquires"), 15000u);
  EXPECT_EQ(run.text("lock_address").rfind("0x", 0), 0u);
}

TEST(Forker, ChildAndItsThreadBurnAndExit) {
  for (bool exec : {false, true}) {
    std::vector<std::string> args = {"--burn-ms", "50"};
    if (exec) args.push_back("--exec");
    auto run = run_workload(workload("forker"), args);
    ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
    EXPECT_EQ(run.number("child_exit_status"), 0u);
    EXPECT_EQ(run.number("child_execed"), exec ? 1u : 0u);
    EXPECT_NE(run.number("child_pid"), run.number("parent_pid"));
    EXPECT_NE(run.number("child_thread_tid"), run.number("child_pid"));
    for (const char* key :
         {"cpu_ns.parent_burn", "cpu_ns.child_burn", "cpu_ns.child_thread_burn"}) {
      EXPECT_GE(run.number(key), 50'000'000u) << key;
    }
  }
}

TEST(OmitFp, RunsItsCallChain) {
  auto run = run_workload(workload("omit_fp"), {"--seconds", "0.2", "--steps", "10000"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  EXPECT_GT(run.number("calls"), 0u);
  EXPECT_GE(run.number("elapsed_ns"), 200'000'000u);
  auto fixed = run_workload(workload("omit_fp"), {"--calls", "50", "--steps", "1000"});
  ASSERT_EQ(fixed.exit_code, 0) << fixed.raw_stdout;
  EXPECT_EQ(fixed.number("calls"), 50u);
}

TEST(FutexStorm, CountsEveryLockCallAndFault) {
  auto run = run_workload(workload("futex_storm"), {"--threads", "3", "--iterations", "2000",
                                                    "--fault-every", "10", "--fault-pages", "2"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  EXPECT_EQ(run.number("lock_calls"), 6000u);
  EXPECT_EQ(run.number("unlock_calls"), 6000u);
  EXPECT_EQ(run.number("faulting_sections"), 3u * 200u);
  EXPECT_EQ(run.number("pages_touched"), 2 * run.number("faulting_sections"));
  EXPECT_GT(run.number("cpu_ns"), 0u);
  EXPECT_EQ(count_list(run.text("worker_tids")), 3u);
}

TEST(RequestStory, EveryRequestsPhasesFollowFromItsId) {
  auto run = run_workload(workload("request_story"),
                          {"--threads", "3", "--requests", "14", "--cpu-us", "200", "--hold-us",
                           "100", "--sleep-us", "300", "--pages", "2", "--print-tls"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  EXPECT_EQ(run.number("requests"), 14u);
  std::vector<std::uint64_t> worker_tids;
  for (int i = 0; i < 3; ++i)
    worker_tids.push_back(run.number("tls." + std::to_string(i) + ".tid"));
  for (std::uint64_t id = 1; id <= 14; ++id) {
    const std::string key = "request." + std::to_string(id) + ".";
    const std::uint64_t scale = 1 + id % 7;
    EXPECT_NE(std::find(worker_tids.begin(), worker_tids.end(), run.number(key + "tid")),
              worker_tids.end())
        << id;
    EXPECT_EQ(run.number(key + "wall_ns"),
              run.number(key + "end_ns") - run.number(key + "start_ns"));
    EXPECT_GE(run.number(key + "on_cpu_ns"), (200u + 100u) * 1000u * scale) << id;
    EXPECT_GE(run.number(key + "sleep_ns"), 300u * 1000u * scale) << id;
    EXPECT_GE(run.number(key + "page_faults"), 2u * scale) << id;
    // (CPU time and sleep overlap a little: a sleep's syscall runs on the CPU.)
    EXPECT_GE(run.number(key + "wall_ns"), run.number(key + "on_cpu_ns")) << id;
    EXPECT_GE(run.number(key + "wall_ns"), run.number(key + "sleep_ns")) << id;
  }
}

TEST(RequestStory, RequestIdIsWhereTheElfFileSaysEachThreadHasIt) {
  auto run = run_workload(workload("request_story"),
                          {"--threads", "2", "--requests", "2", "--cpu-us", "10", "--hold-us", "10",
                           "--sleep-us", "10", "--print-tls"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  Result<objfile::TlsVariable> variable =
      objfile::findTlsVariable(workload("request_story"), run.text("request_id_symbol"));
  ASSERT_TRUE(variable) << variable.error().message();
  EXPECT_EQ(variable->size, 8u);
  for (int i = 0; i < 2; ++i) {
    const std::string key = "tls." + std::to_string(i) + ".";
    EXPECT_EQ(
        run.number(key + "thread_pointer") - variable->executableBlockOffset() + variable->offset,
        run.number(key + "request_id_address"));
  }
}

TEST(WaitKinds, PrintsWhoHeldAndWhoWaitedInEveryScenario) {
  auto run = run_workload(workload("wait_kinds"), {"--rounds", "2", "--hold-us", "2000"});
  ASSERT_EQ(run.exit_code, 0) << run.raw_stdout;
  for (std::string scenario :
       {"mutex", "rwlock", "condvar", "semaphore", "shared_semaphore", "join"}) {
    EXPECT_EQ(run.text(scenario + "_address").rfind("0x", 0), 0u) << scenario;
    EXPECT_NE(run.number(scenario + "_holder_tid"), 0u) << scenario;
    EXPECT_NE(run.number(scenario + "_waiter_tid"), 0u) << scenario;
    EXPECT_NE(run.number(scenario + "_holder_tid"), run.number(scenario + "_waiter_tid"))
        << scenario;
    EXPECT_EQ(run.number(scenario + "_rounds"), 2u) << scenario;
    // Each holder held (or slept before posting) at least what it was asked.
    EXPECT_GE(run.number(scenario + "_hold_ns"), 2u * 2'000'000u) << scenario;
  }
  // The poster of the shared semaphore is another process (its only thread).
  EXPECT_EQ(run.number("shared_semaphore_holder_pid"), run.number("shared_semaphore_holder_tid"));
  EXPECT_NE(run.number("shared_semaphore_holder_pid"), run.number("pid"));
  EXPECT_NE(run.number("rwlock_writer_waiter_tid"), 0u);
}

}  // namespace
}  // namespace incise::testing
