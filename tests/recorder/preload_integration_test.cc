// `--locks all` on a command goes through libincise-preload.so: records real
// programs with real BPF and checks the lock rows against the programs' own
// counts, across fork and exec, in a program that closes its descriptors and
// clears its environment, and for binaries the library cannot enter.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "format/event_kinds.h"
#include "tests/recorder/locks_recording.h"

namespace incise::testing {
namespace {

using format::LockInterval;
using format::LockKind;

const std::string kFutexStorm = INCISE_WORKLOADS_DIR "/futex_storm";
const std::string kPreloadChild = INCISE_PRELOAD_CHILD;
const std::string kPreloadChildStatic = INCISE_PRELOAD_CHILD_STATIC;

// Sections (rows that took the lock) of `pid` at `address` of `kind`.
uint64_t sectionsAt(const std::vector<LockInterval>& rows, uint64_t pid, uint64_t address,
                    LockKind kind) {
  uint64_t sections = 0;
  for (const LockInterval& row : rows)
    if (row.pid == pid && row.address == address && row.lock_kind == static_cast<uint64_t>(kind) &&
        !(row.flags & format::kLockTryFailed))
      ++sections;
  return sections;
}

// 30,000 records a thread: a ring holds them all even when a loaded box keeps
// the recorder's reader from running (tools/bench measures the sustained case).
TEST(PreloadIntegration, FutexStormHasEveryAcquisitionAndNothingLost) {
  INCISE_REQUIRE_RECORDING();
  Recording run = record({"--locks", "all", "-F", "19"},
                         {kFutexStorm, "--threads", "4", "--iterations", "15000"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  EXPECT_NE(run.recorder_stderr.find("locks (preload)"), std::string::npos) << run.recorder_stderr;
  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  std::vector<LockInterval> rows = trace.rows<LockInterval>();
  uint64_t contended = 0, released = 0;
  for (const LockInterval& row : rows) {
    if (row.pid != run.value("pid") || row.address != run.value("mutex_address")) continue;
    if (row.flags & format::kLockContended) ++contended;
    if (row.release_time >= row.acquired_time && row.acquired_time >= row.time) ++released;
  }
  uint64_t sections =
      sectionsAt(rows, run.value("pid"), run.value("mutex_address"), LockKind::kMutex);
  EXPECT_EQ(sections, run.value("lock_calls"));
  EXPECT_EQ(released, run.value("unlock_calls"));
  EXPECT_EQ(trace.lost(format::LostSource::kLocks), 0u);
  EXPECT_GT(contended, 0u) << "4 threads on one mutex never waited?";
  // The futex waits inside the calls became the calls' contention, not rows of their own.
  for (const LockInterval& row : rows)
    EXPECT_FALSE(row.lock_kind == static_cast<uint64_t>(LockKind::kFutex) &&
                 row.address == run.value("mutex_address"))
        << "a futex wait on the mutex left as a wait row at " << row.time;
}

// 16,000 records a thread: within one ring, whenever the recorder's reader runs.
TEST(PreloadIntegration, SpinLocksAreCounted) {
  INCISE_REQUIRE_RECORDING();
  Recording run = record({"--locks", "all", "--no-sched", "-F", "19"},
                         {kPreloadChild, "--spin", "8000", "--threads", "3"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  uint64_t pid = 0;
  for (const LockInterval& row : trace.rows<LockInterval>())
    if (row.address == run.value("spin_address")) pid = row.pid;
  EXPECT_EQ(sectionsAt(trace.rows<LockInterval>(), pid, run.value("spin_address"), LockKind::kSpin),
            run.value("spin_sections"));
  EXPECT_EQ(trace.lost(format::LostSource::kLocks), 0u);
}

TEST(PreloadIntegration, ForkedAndExecedChildrenAreRecorded) {
  INCISE_REQUIRE_RECORDING();
  Recording run =
      record({"--locks", "all", "-F", "19"}, {kPreloadChild, "--fork-exec", "3000", kFutexStorm,
                                              "--threads", "2", "--iterations", "4000"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  ASSERT_EQ(run.value("child_exit_status"), 0u) << run.workload_stdout;
  ASSERT_EQ(run.value("pid"), run.value("child_pid")) << "futex_storm runs in the forked child";
  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  std::vector<LockInterval> rows = trace.rows<LockInterval>();
  uint64_t fork_mutex = run.value("fork_mutex_address");
  EXPECT_EQ(sectionsAt(rows, run.value("parent_pid"), fork_mutex, LockKind::kMutex),
            run.value("parent_sections"));
  EXPECT_EQ(sectionsAt(rows, run.value("child_pid"), fork_mutex, LockKind::kMutex),
            run.value("child_sections"));
  EXPECT_EQ(sectionsAt(rows, run.value("child_pid"), run.value("mutex_address"), LockKind::kMutex),
            run.value("lock_calls"));
  EXPECT_EQ(trace.lost(format::LostSource::kLocks), 0u);
}

TEST(PreloadIntegration, ProgramThatClosesItsDescriptorsAndClearsItsEnvironmentRuns) {
  INCISE_REQUIRE_RECORDING();
  Recording run = record({"--locks", "all", "--no-sched", "-F", "19"},
                         {kPreloadChild, "--hostile", "1500", kPreloadChild, "--mutex", "700"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  // The exec'd image loads the library again, finds no rings (the descriptor
  // was closed and its number reused) and runs unrecorded.
  ASSERT_EQ(run.value("plain_sections"), 700u) << run.workload_stdout;
  ASSERT_EQ(run.value("plain_pid"), run.value("hostile_pid"));
  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  std::vector<LockInterval> rows = trace.rows<LockInterval>();
  EXPECT_EQ(sectionsAt(rows, run.value("hostile_pid"), run.value("hostile_mutex_address"),
                       LockKind::kMutex),
            run.value("hostile_sections"));
  EXPECT_EQ(
      sectionsAt(rows, run.value("plain_pid"), run.value("plain_mutex_address"), LockKind::kMutex),
      0u);
}

// The rings are the program's memory: one that names another process (here
// init) is not believed, and the recorder says how many records it ignored.
// The ring's pid is read as the recorder drains it: the call made before
// the forgery went with the rest.
TEST(PreloadIntegration, ARingNamingAProcessOutsideTheRecordingIsIgnored) {
  INCISE_REQUIRE_RECORDING();
  Recording run = record({"--locks", "all", "--no-sched", "-F", "19"},
                         {kPreloadChild, "--forge-pid", "1", "500"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  ASSERT_EQ(run.value("ring_found"), 1u) << run.workload_stdout;
  ASSERT_EQ(run.value("forged_sections"), 500u);
  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  std::vector<LockInterval> rows = trace.rows<LockInterval>();
  for (const LockInterval& row : rows) EXPECT_NE(row.pid, 1u);
  std::string said;
  for (const std::string& note : trace.reader().metadata().notes)
    if (note.find("naming a process the recording does not follow") != std::string::npos)
      said = note;
  // 501 calls, each an acquisition and a release.
  EXPECT_EQ(said.rfind("locks (preload): 1002 ring records", 0), 0u) << said;
}

// A handler's lock calls that interrupt a record being written are counted
// lost, never written over it: the interrupted thread's own rows stay exact.
// 15,000 sections and the handler's: within one ring.
TEST(PreloadIntegration, LockCallsInSignalHandlersLeaveTheThreadsRowsExact) {
  INCISE_REQUIRE_RECORDING();
  Recording run =
      record({"--locks", "all", "--no-sched", "-F", "19"}, {kPreloadChild, "--signals", "15000"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  ASSERT_GT(run.value("handler_sections"), 0u) << run.workload_stdout;
  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  std::vector<LockInterval> rows = trace.rows<LockInterval>();
  EXPECT_EQ(sectionsAt(rows, run.value("signal_pid"), run.value("signal_mutex_address"),
                       LockKind::kMutex),
            run.value("signal_sections"));
  uint64_t handler_rows = sectionsAt(rows, run.value("signal_pid"),
                                     run.value("handler_mutex_address"), LockKind::kMutex);
  EXPECT_LE(handler_rows, run.value("handler_sections"));
  // Each handler section lost at most its two records.
  EXPECT_GE(handler_rows + trace.lost(format::LostSource::kLocks), run.value("handler_sections"));
}

TEST(PreloadIntegration, StaticBinaryIsNamedAndRecordedWithoutTheLibrary) {
  INCISE_REQUIRE_RECORDING();
  Recording run =
      record({"--locks", "all", "--no-sched", "-F", "19"}, {kPreloadChildStatic, "--mutex", "200"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  EXPECT_EQ(run.value("plain_sections"), 200u);
  EXPECT_NE(run.recorder_stderr.find(kPreloadChildStatic +
                                     " is statically linked: no library can be preloaded into it; "
                                     "its lock calls are recorded through uprobes"),
            std::string::npos)
      << run.recorder_stderr;
}

TEST(PreloadIntegration, SetuidBinaryFallsBackToUprobes) {
  INCISE_REQUIRE_RECORDING();
  std::string copy = tempTracePath("setuid_child");
  std::filesystem::copy_file(kPreloadChild, copy);
  RemoveOnExit remove_copy{copy};
  ASSERT_EQ(chmod(copy.c_str(), 04755), 0);
  Recording run = record({"--locks", "all", "--no-sched", "-F", "19"}, {copy, "--mutex", "300"});
  RemoveOnExit cleanup{run.trace_path};
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  EXPECT_NE(run.recorder_stderr.find(copy + " is setuid: the dynamic loader ignores LD_PRELOAD"),
            std::string::npos)
      << run.recorder_stderr;
  TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  // The uprobes on the C library see every call instead.
  EXPECT_EQ(sectionsAt(trace.rows<LockInterval>(), run.value("plain_pid"),
                       run.value("plain_mutex_address"), LockKind::kMutex),
            300u);
}

}  // namespace
}  // namespace incise::testing
