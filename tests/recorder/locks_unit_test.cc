// Resolving --lock-probe symbols, finding libc in /proc/PID/maps, the cpu
// lists the per-CPU sources open events on, and joining a futex wait's
// scheduler records into its lock row, and checking a lock's owner is a
// thread of the waiter's process.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <future>
#include <thread>

#include "recorder/metadata/proc_threads.h"
#include "recorder/online_cpus.h"
#include "recorder/probes/libc_locator.h"
#include "recorder/probes/lock_probe_spec.h"
#include "recorder/sources/futex_wait_rows.h"

// Real functions of this test binary for resolveLockProbe to find.
extern "C" __attribute__((noinline, used)) void incise_test_lock(void* lock) {
  asm volatile("" ::"r"(lock));
}
extern "C" __attribute__((noinline, used)) void incise_test_unlock(void* lock) {
  asm volatile("" ::"r"(lock) : "memory");
}

namespace incise::recorder {
namespace {

std::string selfPath() {
  char buffer[4096];
  ssize_t n = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
}

TEST(LockProbeSpec, ResolvesFunctionsOfARealBinary) {
  std::string self = selfPath();
  ASSERT_FALSE(self.empty());
  Result<ResolvedLockProbe> probe = resolveLockProbe({.binary = self,
                                                      .acquire_symbol = "incise_test_lock",
                                                      .release_symbol = "incise_test_unlock"});
  ASSERT_TRUE(probe) << probe.error().message();
  EXPECT_NE(probe->acquire_offset, 0u);
  EXPECT_NE(probe->acquire_offset, probe->release_offset);
}

TEST(LockProbeSpec, NamesTheMissingSymbolAndTheFile) {
  std::string self = selfPath();
  Result<ResolvedLockProbe> probe = resolveLockProbe(
      {.binary = self, .acquire_symbol = "no_such_lock", .release_symbol = "incise_test_unlock"});
  ASSERT_FALSE(probe);
  EXPECT_EQ(probe.error().message(), "--lock-probe: no symbol 'no_such_lock' in " + self);
}

TEST(LockProbeSpec, NamesAMissingBinary) {
  Result<ResolvedLockProbe> probe =
      resolveLockProbe({.binary = "/no/such/binary", .acquire_symbol = "a", .release_symbol = "b"});
  ASSERT_FALSE(probe);
  EXPECT_EQ(probe.error().message(), "--lock-probe: /no/such/binary: No such file or directory");
}

TEST(LibcLocator, FindsTheExecutableLibcMapping) {
  const char* maps =
      "55d0a000-55d0b000 r--p 00000000 08:01 123 /usr/bin/app\n"
      "7f00a000-7f00b000 r-xp 00000000 08:01 77 /usr/lib/x86_64-linux-gnu/libcap.so.2\n"
      "7f10a000-7f132000 r--p 00000000 08:01 99 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
      "7f132000-7f287000 r-xp 00028000 08:01 99 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
      "7ffd0000-7ffd1000 rw-p 00000000 00:00 0 [stack]\n";
  Result<std::string> libc = findLibcInMaps(maps);
  ASSERT_TRUE(libc) << libc.error().message();
  EXPECT_EQ(*libc, "/usr/lib/x86_64-linux-gnu/libc.so.6");
}

TEST(LibcLocator, SaysWhenThereIsNone) {
  Result<std::string> libc = findLibcInMaps("00400000-00401000 r-xp 00000000 08:01 5 /static\n");
  ASSERT_FALSE(libc);
  EXPECT_NE(libc.error().message().find("no libc"), std::string::npos);
}

TEST(LibcLocator, FindsOurOwnThroughProcRoot) {
  Result<std::string> libc = libcOfProcess(static_cast<uint32_t>(getpid()));
  ASSERT_TRUE(libc) << libc.error().message();
  EXPECT_EQ(libc->rfind("/proc/" + std::to_string(getpid()) + "/root/", 0), 0u) << *libc;
  EXPECT_EQ(access(libc->c_str(), R_OK), 0) << *libc;
}

TEST(CpuList, ParsesRangesAndSingles) {
  Result<std::vector<int>> cpus = parseCpuList("0-2,5,7-8\n");
  ASSERT_TRUE(cpus) << cpus.error().message();
  EXPECT_EQ(*cpus, (std::vector<int>{0, 1, 2, 5, 7, 8}));
}

TEST(CpuList, RejectsGarbage) {
  for (const char* bad : {"", "\n", "a", "3-1", "1-", "-1", "1,,2", "0-99999999"})
    EXPECT_FALSE(parseCpuList(bad)) << bad;
}

FutexBlock blockAt(uint64_t time, uint32_t tid) {
  return {.time = time,
          .pid = 10,
          .tid = tid,
          .address = 0x5000,
          .op = 128,
          .value = 2,
          .object = static_cast<uint32_t>(format::WaitObject::kMutex),
          .holder_tid = 12,
          .holder_state = static_cast<uint32_t>(format::HolderState::kRunning),
          .stack_id = 7};
}

FutexWake wakeOf(uint64_t time, uint32_t wakee, uint32_t waker, bool releases) {
  return {.time = time,
          .waker_pid = 10,
          .waker_tid = waker,
          .wakee_tid = wakee,
          .releases = releases,
          .stack_id = 9};
}

// The workload's threads: pid 10 has threads 11-14.
bool threadOfTen(uint32_t pid, uint32_t tid) {
  return pid == 10 && tid >= 11 && tid <= 14;
}

TEST(FutexWaitRows, JoinsBlockWakeAndSwitchInIntoOneRow) {
  FutexWaitRows waits(threadOfTen);
  waits.onBlock(blockAt(100, 11));
  EXPECT_FALSE(waits.onSwitchIn(13, 150).has_value());  // another thread's switch-in
  waits.onWake(wakeOf(180, 11, 12, true));
  waits.onWake(wakeOf(185, 11, 14, true));  // a second wake-up finds it woken
  std::optional<format::LockInterval> row = waits.onSwitchIn(11, 200);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->time, 100u);
  EXPECT_EQ(row->acquired_time, 200u);
  EXPECT_EQ(row->tid, 11u);
  EXPECT_EQ(row->address, 0x5000u);
  EXPECT_EQ(row->lock_kind, uint64_t(format::LockKind::kFutex));
  EXPECT_EQ(row->flags, format::kLockContended | format::kLockContendedOnly |
                            format::kLockFutexFacts | format::kLockHolderChecked);
  EXPECT_EQ(row->releaser_tid, 12u);
  EXPECT_EQ(row->releaser_stack_id, 9u);
  EXPECT_EQ(row->holder_tid, 12u);
  EXPECT_EQ(row->futex_value, 2u);
  EXPECT_EQ(row->stack_id, 7u);
  EXPECT_EQ(waits.waitsInProgress(), 0u);
  EXPECT_FALSE(waits.onSwitchIn(11, 300).has_value());
}

TEST(FutexWaitRows, AGoThreadsWaitCarriesItsGoroutine) {
  FutexWaitRows waits(threadOfTen);
  FutexBlock block = blockAt(100, 11);
  block.goid = 33;
  waits.onBlock(block);
  waits.onBlock(blockAt(110, 13));  // a thread on no goroutine
  std::optional<format::LockInterval> go = waits.onSwitchIn(11, 200);
  std::optional<format::LockInterval> none = waits.onSwitchIn(13, 210);
  ASSERT_TRUE(go.has_value());
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(go->goid, 33u);
  EXPECT_EQ(none->goid, 0u);
  EXPECT_EQ(go->releaser_goid, 0u);
}

// Only waits that may be for a holder keep a short preemption written
// (ShortBlocks): a condvar, semaphore or join waits for an event.
TEST(FutexWaitRows, OnlyLockWaitsCountAsWaitsForAHolder) {
  FutexWaitRows waits(threadOfTen);
  auto on = [](FutexBlock block, format::WaitObject object) {
    block.object = static_cast<uint32_t>(object);
    return block;
  };
  waits.onBlock(on(blockAt(100, 11), format::WaitObject::kCondvarGroup1));
  waits.onBlock(on(blockAt(101, 12), format::WaitObject::kSemaphore));
  waits.onBlock(on(blockAt(102, 13), format::WaitObject::kThread));
  EXPECT_EQ(waits.waitsInProgress(), 3u);
  EXPECT_EQ(waits.holderWaitsInProgress(), 0u);
  waits.onBlock(on(blockAt(103, 14), format::WaitObject::kMutex));
  EXPECT_EQ(waits.holderWaitsInProgress(), 1u);
  // A second block of a thread without its switch-in replaces its wait.
  waits.onBlock(on(blockAt(104, 14), format::WaitObject::kUnknown));
  EXPECT_EQ(waits.holderWaitsInProgress(), 1u);
  waits.onBlock(on(blockAt(105, 11), format::WaitObject::kRwlockWriters));
  EXPECT_EQ(waits.holderWaitsInProgress(), 2u);
  EXPECT_TRUE(waits.onSwitchIn(14, 200).has_value());
  EXPECT_EQ(waits.holderWaitsInProgress(), 1u);
  waits.onThreadExit(11);
  EXPECT_EQ(waits.holderWaitsInProgress(), 0u);
  EXPECT_EQ(waits.waitsInProgress(), 2u);
  waits.onBlock(on(blockAt(300, 11), format::WaitObject::kPiMutex));
  EXPECT_EQ(waits.finish(400).size(), 3u);
  EXPECT_EQ(waits.holderWaitsInProgress(), 0u);
}

TEST(FutexWaitRows, AWakeUpBeforeItsBlockStillEndsIt) {
  FutexWaitRows waits(threadOfTen);
  waits.onWake(wakeOf(90, 11, 12, true));  // reached the ring before the block
  waits.onBlock(blockAt(100, 11));
  std::optional<format::LockInterval> row = waits.onSwitchIn(11, 200);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->releaser_tid, 12u);
}

TEST(FutexWaitRows, AWakeUpFromBeforeTheThreadLastRanIsNotThisWaits) {
  FutexWaitRows waits(nullptr);
  waits.onWake(wakeOf(50, 11, 12, true));
  EXPECT_FALSE(waits.onSwitchIn(11, 60).has_value());  // it ran since
  waits.onBlock(blockAt(100, 11));
  std::optional<format::LockInterval> row = waits.onSwitchIn(11, 200);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->releaser_tid, 0u);
}

TEST(FutexWaitRows, TimersAndSignalsAreNotReleasers) {
  FutexWaitRows waits(nullptr);
  waits.onBlock(blockAt(100, 11));
  waits.onWake(wakeOf(150, 11, 99, /*releases=*/false));
  std::optional<format::LockInterval> row = waits.onSwitchIn(11, 200);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->releaser_tid, 0u);
  EXPECT_EQ(row->releaser_stack_id, 0u);
}

TEST(FutexWaitRows, OnlyThreadsOfTheWaitersProcessAreCheckedHolders) {
  FutexWaitRows waits(threadOfTen);
  waits.onBlock(blockAt(100, 11));
  std::optional<format::LockInterval> row = waits.onSwitchIn(11, 200);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->holder_tid, 12u);
  EXPECT_NE(row->flags & format::kLockHolderChecked, 0u);
  // An owner /proc does not show (exited, or no tid at all) stays, unchecked,
  // for the analyzer to check against the trace.
  FutexBlock block = blockAt(300, 11);
  block.holder_tid = 99;
  waits.onBlock(block);
  row = waits.onSwitchIn(11, 400);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->holder_tid, 99u);
  EXPECT_EQ(row->flags & format::kLockHolderChecked, 0u);
  // Without a check no owner is checked.
  FutexWaitRows unchecked(nullptr);
  unchecked.onBlock(blockAt(100, 11));
  row = unchecked.onSwitchIn(11, 200);
  EXPECT_EQ(row->holder_tid, 12u);
  EXPECT_EQ(row->flags & format::kLockHolderChecked, 0u);
}

TEST(FutexWaitRows, WaitsStillBlockedEndWithTheRecording) {
  FutexWaitRows waits(nullptr);
  waits.onBlock(blockAt(100, 11));
  waits.onBlock(blockAt(120, 13));
  waits.onThreadExit(13);
  std::vector<format::LockInterval> rows = waits.finish(500);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].tid, 11u);
  EXPECT_EQ(rows[0].acquired_time, 500u);
  EXPECT_NE(rows[0].flags & format::kLockWaitUnfinished, 0u);
  EXPECT_EQ(waits.waitsInProgress(), 0u);
}

TEST(ProcThreads, AThreadOfThisProcessIsOneAndNotAnothersThread) {
  std::promise<uint32_t> tid;
  std::promise<void> done;
  std::thread other([&] {
    tid.set_value(static_cast<uint32_t>(gettid()));
    done.get_future().wait();
  });
  uint32_t other_tid = tid.get_future().get();
  ProcThreads threads;
  uint32_t self = static_cast<uint32_t>(getpid());
  EXPECT_TRUE(threads.isThreadOf(self, other_tid));
  EXPECT_TRUE(threads.isThreadOf(self, self));
  EXPECT_FALSE(threads.isThreadOf(1, other_tid));  // init has no such thread
  EXPECT_FALSE(threads.isThreadOf(self, 0));
  done.set_value();
  other.join();
}

TEST(ProcThreads, AnswersAreKeptUntilTheThreadExits) {
  std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("proc_threads_test." + std::to_string(getpid()));
  std::filesystem::create_directories(root / "10" / "task" / "11");
  ProcThreads threads(root.string());
  EXPECT_TRUE(threads.isThreadOf(10, 11));
  EXPECT_FALSE(threads.isThreadOf(10, 12));
  std::filesystem::remove(root / "10" / "task" / "11");
  EXPECT_TRUE(threads.isThreadOf(10, 11));  // kept: one access() per pair
  threads.forget(11);
  EXPECT_FALSE(threads.isThreadOf(10, 11));
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace incise::recorder
