// Records the bundled lock workloads with real BPF and checks the lock
// intervals and page faults against the workloads' own counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "format/event_kinds.h"
#include "tests/recorder/locks_recording.h"

namespace incise::testing {
namespace {

using format::LockInterval;
using format::LockKind;

const std::string kLockStory = INCISE_WORKLOADS_DIR "/lock_story";
const std::string kCustomLock = INCISE_WORKLOADS_DIR "/custom_lock";

std::vector<LockInterval> intervalsOn(const std::vector<LockInterval>& rows, uint64_t pid,
                                      uint64_t address, LockKind kind) {
  std::vector<LockInterval> out;
  for (const LockInterval& row : rows)
    if (row.pid == pid && row.address == address && row.lock_kind == static_cast<uint64_t>(kind))
      out.push_back(row);
  return out;
}

TEST(LocksIntegration, ModeAllRecordsEveryCriticalSection) {
  INCISE_REQUIRE_RECORDING();
  Recording run = record({"--locks", "all", "--no-sched", "-F", "19"},
                         {kLockStory, "--threads", "4", "--iterations", "1500", "--trylock-every",
                          "7", "--burn-every", "0", "--hogs", "0"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  ASSERT_TRUE(run.has("critical_sections")) << run.workload_stdout;

  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  std::vector<LockInterval> rows = intervalsOn(trace.rows<LockInterval>(), run.value("pid"),
                                               run.value("mutex_address"), LockKind::kMutex);
  uint64_t sections = 0, failed_trylocks = 0, contended = 0, at_call_site = 0;
  for (const LockInterval& row : rows) {
    if (row.flags & format::kLockTryFailed) {
      ++failed_trylocks;
      continue;
    }
    ++sections;
    if (row.flags & format::kLockContended) ++contended;
    EXPECT_LE(row.time, row.acquired_time);
    EXPECT_LE(row.acquired_time, row.release_time);
    EXPECT_NE(row.stack_id, 0u);
    // The acquire stack reaches the workload's caller (libc has no frame
    // pointers, but a return probe's stack starts at the call site).
    for (uint64_t frame : trace.reader().stacks().frames(row.stack_id)) {
      if (trace.symbolize(static_cast<uint32_t>(row.pid), frame).find("run_worker") !=
          std::string::npos) {
        ++at_call_site;
        break;
      }
    }
  }
  EXPECT_EQ(sections, run.value("critical_sections"));
  EXPECT_EQ(failed_trylocks, run.value("trylock_calls") - run.value("trylock_acquired"));
  EXPECT_GT(contended, 0u) << "4 threads on one mutex never waited?";
  EXPECT_GE(at_call_site * 10, sections * 9) << at_call_site << " of " << sections;
}

TEST(LocksIntegration, ContendedModeSeesFutexWaitsOnTheMutex) {
  INCISE_REQUIRE_RECORDING();
  // Sections of 20,000 mix steps (tens of microseconds) outlast a waiter's way from its futex
  // call to its switch-out, so most waits find the holder still inside; with a few
  // microseconds' sections about half of them found it already unlocking.
  Recording run = record({"--locks", "contended", "--no-sched", "-F", "19"},
                         {kLockStory, "--threads", "4", "--iterations", "2000", "--work", "20000",
                          "--burn-every", "0", "--hogs", "0"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;

  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  std::vector<LockInterval> all = trace.rows<LockInterval>();
  std::vector<LockInterval> waits =
      intervalsOn(all, run.value("pid"), run.value("mutex_address"), LockKind::kFutex);
  ASSERT_GT(waits.size(), 0u) << "no futex wait on the mutex at " << run.values["mutex_address"];
  std::vector<uint64_t> workers = run.list("worker_tids");
  std::set<uint64_t> worker_set(workers.begin(), workers.end());
  uint64_t with_releaser = 0;
  uint64_t exact = 0;
  uint64_t holder_on_cpu_or_queued = 0;  // the holder's state at the wait's start
  for (const LockInterval& row : waits) {
    EXPECT_EQ(row.flags & ~uint64_t{format::kLockHolderChecked},
              format::kLockContended | format::kLockContendedOnly | format::kLockFutexFacts);
    // Seen at its blocking switch: glibc's lock protocol, the mutex's layout.
    EXPECT_EQ(row.futex_op & 0x7f, 0u);  // FUTEX_WAIT
    EXPECT_EQ(row.futex_value, 2u);
    EXPECT_EQ(row.object, uint64_t(format::WaitObject::kMutex));
    if (row.holder_tid != 0) {
      ++exact;
      EXPECT_TRUE(worker_set.count(row.holder_tid)) << "holder not a worker: " << row.holder_tid;
      EXPECT_NE(row.holder_tid, row.tid);
      holder_on_cpu_or_queued += row.holder_state == uint64_t(format::HolderState::kRunning) ||
                                 row.holder_state == uint64_t(format::HolderState::kRunnable);
    }
    EXPECT_LE(row.time, row.acquired_time);
    EXPECT_EQ(row.release_time, 0u);
    EXPECT_TRUE(worker_set.count(row.tid)) << "wait by a thread that is not a worker: " << row.tid;
    if (row.releaser_tid != 0) {
      ++with_releaser;
      EXPECT_TRUE(worker_set.count(row.releaser_tid)) << row.releaser_tid;
      EXPECT_NE(row.releaser_tid, row.tid);
    }
  }
  // Most waits end because the holder unlocked and woke them, and most read
  // their holder from the mutex (it is 0 only in glibc's few instructions
  // between taking the lock and setting __owner, or clearing it and releasing).
  EXPECT_GT(with_releaser * 2, waits.size());
  EXPECT_GT(exact * 2, waits.size()) << exact << " of " << waits.size();
  // A holder spends its sections computing: on a cpu, or preempted from one
  // (the kernel tracks each thread's state at its switches, --no-sched too).
  EXPECT_GT(holder_on_cpu_or_queued * 2, exact) << holder_on_cpu_or_queued << " of " << exact;
  // Contended mode puts no uprobe on the lock calls: no per-call rows.
  for (const LockInterval& row : all) EXPECT_EQ(row.lock_kind, uint64_t(LockKind::kFutex));
}

// A futex wait is seen at its blocking switch: the wait's row and the
// switch row carry the same user stack, the one the thread waited at.
TEST(LocksIntegration, BlockingSwitchInAWaitHasTheWaitsUserStack) {
  INCISE_REQUIRE_RECORDING();
  // Every blocking switch is written (most of these waits are shorter than
  // 1 ms, and a --sched-min-block would drop their switch rows).
  Recording run = record(
      {"--locks", "contended", "-F", "19", "--sched-min-block", "0"},
      {kLockStory, "--threads", "4", "--iterations", "2000", "--burn-every", "0", "--hogs", "0"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;

  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  std::vector<LockInterval> waits = intervalsOn(trace.rows<LockInterval>(), run.value("pid"),
                                                run.value("mutex_address"), LockKind::kFutex);
  ASSERT_GT(waits.size(), 0u);
  std::map<uint64_t, std::vector<format::SchedSwitch>> blocked_by_tid;
  for (const format::SchedSwitch& s : trace.rows<format::SchedSwitch>())
    if (s.prev_pid == run.value("pid") && s.prev_state != 0)
      blocked_by_tid[s.prev_tid].push_back(s);

  auto userFrames = [&](uint64_t stack_id) {
    std::vector<uint64_t> user;
    for (uint64_t frame : trace.reader().stacks().frames(stack_id))
      if (frame < (uint64_t{1} << 63)) user.push_back(frame);  // kernel addresses have the top bit
    return user;
  };
  uint64_t compared = 0;
  for (const LockInterval& wait : waits) {
    ASSERT_NE(wait.stack_id, 0u);
    std::vector<uint64_t> wait_frames = userFrames(wait.stack_id);
    EXPECT_FALSE(wait_frames.empty());
    for (const format::SchedSwitch& s : blocked_by_tid[wait.tid]) {
      if (s.time != wait.time) continue;
      ASSERT_NE(s.stack_id, 0u);
      EXPECT_EQ(userFrames(s.stack_id), wait_frames) << "tid " << wait.tid << " at " << s.time;
      ++compared;
    }
  }
  // Every wait is one blocking switch, at the wait's start.
  EXPECT_EQ(compared, waits.size());
}

TEST(LocksIntegration, CustomLockProbeSeesEveryCall) {
  INCISE_REQUIRE_RECORDING();
  std::string probe = kCustomLock + ":my_spin_acquire:my_spin_release";
  Recording run = record({"--locks", "off", "--lock-probe", probe, "--no-sched", "-F", "19"},
                         {kCustomLock, "--threads", "3", "--iterations", "2000"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  ASSERT_TRUE(run.has("acquire_calls")) << run.workload_stdout;

  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  std::vector<LockInterval> rows = intervalsOn(trace.rows<LockInterval>(), run.value("pid"),
                                               run.value("lock_address"), LockKind::kCustom);
  EXPECT_EQ(rows.size(), run.value("acquire_calls"));
  EXPECT_EQ(run.value("acquire_calls"), run.value("release_calls"));
  for (const LockInterval& row : rows) {
    EXPECT_LE(row.acquired_time, row.release_time);
    EXPECT_EQ(row.flags & format::kLockContendedOnly, 0u);
  }
}

TEST(LocksIntegration, BadLockProbeSymbolIsNamed) {
  INCISE_REQUIRE_RECORDING();
  std::string probe = kCustomLock + ":no_such_acquire:my_spin_release";
  Recording run = record({"--lock-probe", probe, "--no-sched", "-F", "19"},
                         {kCustomLock, "--threads", "1", "--iterations", "10"});
  RemoveOnExit cleanup{run.trace_path};
  EXPECT_NE(run.recorder_stderr.find("--lock-probe: no symbol 'no_such_acquire' in " + kCustomLock),
            std::string::npos)
      << run.recorder_stderr;
}

TEST(LocksIntegration, PageFaultsInsideCriticalSectionsHaveAddresses) {
  INCISE_REQUIRE_RECORDING();
  Recording run = record({"--locks", "all", "--page-faults", "--no-sched", "-F", "19"},
                         {kLockStory, "--threads", "2", "--iterations", "600", "--fault-every", "5",
                          "--fault-pages", "4", "--burn-every", "0", "--hogs", "0"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  ASSERT_GT(run.value("pages_touched"), 0u) << run.workload_stdout;

  uint64_t pid = run.value("pid");
  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  std::vector<LockInterval> sections =
      intervalsOn(trace.rows<LockInterval>(), pid, run.value("mutex_address"), LockKind::kMutex);
  std::vector<format::PageFault> faults = trace.rows<format::PageFault>();
  uint64_t inside = 0, with_stack = 0;
  for (const format::PageFault& fault : faults) {
    if (fault.pid != pid) continue;
    EXPECT_NE(fault.address, 0u);
    if (fault.stack_id != 0) ++with_stack;
    bool held = std::any_of(sections.begin(), sections.end(), [&](const LockInterval& s) {
      return s.tid == fault.tid && s.acquired_time <= fault.time && fault.time <= s.release_time;
    });
    if (held) ++inside;
  }
  // Every fresh page touched while holding the mutex faulted once.
  EXPECT_GE(inside, run.value("pages_touched"));
  EXPECT_GT(with_stack, 0u);
}

}  // namespace
}  // namespace incise::testing
