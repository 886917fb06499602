// classifyWait and waitFramesOf on hand-built lock rows: each rule of
// docs/waits.md, and the holders each kind names.
#include "analyzer/analyses/locks/wait_kind.h"

#include <gtest/gtest.h>

#include <vector>

namespace incise::analyzer {
namespace {

using format::LockInterval;
using format::LockKind;
using format::WaitObject;

constexpr uint64_t kWaiter = 101;
constexpr uint64_t kOther = 202;
constexpr uint64_t kFutexWaitPrivate = 128;
constexpr uint64_t kFutexWaitBitsetPrivate = 9 | 128;
constexpr uint64_t kFutexWaitBitsetShared = 9;

LockInterval futexWait(uint64_t address, uint64_t op, uint64_t value, WaitObject object) {
  return {.time = 1000,
          .acquired_time = 2000,
          .pid = 100,
          .tid = kWaiter,
          .address = address,
          .lock_kind = static_cast<uint64_t>(LockKind::kFutex),
          .flags = format::kLockContended | format::kLockContendedOnly | format::kLockFutexFacts,
          .releaser_tid = kOther,
          .futex_op = op,
          .futex_value = value,
          .object = static_cast<uint64_t>(object)};
}

// A format 2.1 futex row: no facts, only the stack.
LockInterval oldFutexWait(uint64_t address) {
  return {.time = 1000,
          .acquired_time = 2000,
          .pid = 100,
          .tid = kWaiter,
          .address = address,
          .lock_kind = static_cast<uint64_t>(LockKind::kFutex),
          .flags = format::kLockContended | format::kLockContendedOnly,
          .releaser_tid = kOther};
}

WaitFrames libcFrames(std::vector<std::string_view> names) {
  std::vector<NamedFrame> frames;
  for (std::string_view name : names) frames.push_back({.name = name, .in_c_library = true});
  return waitFramesOf(frames);
}

TEST(WaitKind, MutexReadFromTheLockHasAnExactHolder) {
  LockInterval row = futexWait(0x5000, kFutexWaitPrivate, 2, WaitObject::kMutex);
  row.holder_tid = 303;
  WaitClass wait = classifyWait(row, {});
  EXPECT_EQ(wait.kind, WaitKind::kMutex);
  EXPECT_EQ(wait.object, 0x5000u);
  EXPECT_EQ(wait.holder_tid, 303u);  // the owner, not the waker
  EXPECT_EQ(wait.holder_source, HoldSource::kExact);
  EXPECT_TRUE(blamesHolder(wait.kind));
}

TEST(WaitKind, MutexWithoutAnOwnerReadBlamesTheWakerAsInferred) {
  WaitClass wait = classifyWait(futexWait(0x5000, kFutexWaitPrivate, 2, WaitObject::kMutex), {});
  EXPECT_EQ(wait.kind, WaitKind::kMutex);
  EXPECT_EQ(wait.holder_tid, kOther);
  EXPECT_EQ(wait.holder_source, HoldSource::kInferred);
}

TEST(WaitKind, RwlockWordsNameTheRwlockItself) {
  for (auto [object, offset] : {std::pair{WaitObject::kRwlockReaders, 0u},
                                {WaitObject::kRwlockWritePhase, 8u},
                                {WaitObject::kRwlockWriters, 12u}}) {
    LockInterval row = futexWait(0x6000 + offset, kFutexWaitBitsetPrivate, 3, object);
    WaitClass wait = classifyWait(row, {});
    EXPECT_EQ(wait.kind, WaitKind::kRwlock);
    EXPECT_EQ(wait.object, 0x6000u) << format::waitObjectName(row.object);
  }
}

TEST(WaitKind, EventWaitsNeverBlameAHolder) {
  struct Case {
    WaitObject object;
    uint64_t offset;
    WaitKind kind;
  };
  for (Case c : {Case{WaitObject::kCondvarGroup0, 40, WaitKind::kCondvar},
                 Case{WaitObject::kCondvarGroup1, 44, WaitKind::kCondvar},
                 Case{WaitObject::kSemaphore, 0, WaitKind::kSemaphore}}) {
    WaitClass wait =
        classifyWait(futexWait(0x7000 + c.offset, kFutexWaitBitsetPrivate, 0, c.object), {});
    EXPECT_EQ(wait.kind, c.kind);
    EXPECT_EQ(wait.object, 0x7000u);
    EXPECT_FALSE(blamesHolder(wait.kind));
    // The poster or signaller woke this waiter: the cause, seen exactly.
    EXPECT_EQ(wait.holder_tid, kOther);
    EXPECT_EQ(wait.holder_source, HoldSource::kExact);
  }
}

TEST(WaitKind, JoinNamesTheThreadWaitedFor) {
  LockInterval row = futexWait(0x8000, kFutexWaitBitsetShared, 4242, WaitObject::kThread);
  row.releaser_tid = 0;
  WaitClass wait = classifyWait(row, {});
  EXPECT_EQ(wait.kind, WaitKind::kJoin);
  EXPECT_EQ(wait.holder_tid, 4242u);
  EXPECT_EQ(wait.holder_source, HoldSource::kExact);
  EXPECT_FALSE(blamesHolder(wait.kind));
}

TEST(WaitKind, RuntimeParkingWinsOverTheLayout) {
  // HotSpot parks a thread on its own condvar: the layout says condvar.
  std::vector<NamedFrame> frames = {{"__futex_abstimed_wait_common", true},
                                    {"___pthread_cond_timedwait64", true},
                                    {"os::PlatformEvent::park", false},
                                    {"Parker::park", false},
                                    {"Unsafe_Park", false}};
  WaitClass wait =
      classifyWait(futexWait(0x7028, kFutexWaitBitsetPrivate, 0, WaitObject::kCondvarGroup0),
                   waitFramesOf(frames));
  EXPECT_EQ(wait.kind, WaitKind::kPark);
  EXPECT_EQ(wait.rule, "runtime frame");
}

TEST(WaitKind, GoNoteSleepIsParkingAndItsRuntimeLockIsAMutex) {
  std::vector<NamedFrame> park = {{"runtime.futex", false},
                                  {"runtime.futexsleep", false},
                                  {"runtime.notesleep", false},
                                  {"runtime.stopm", false}};
  std::vector<NamedFrame> lock = {
      {"runtime.futex", false}, {"runtime.futexsleep", false}, {"runtime.lock2", false}};
  std::vector<NamedFrame> bare = {{"runtime.futex", false}};
  LockInterval row = futexWait(0x9000, kFutexWaitPrivate, 0, WaitObject::kUnknown);
  EXPECT_EQ(classifyWait(row, waitFramesOf(park)).kind, WaitKind::kPark);
  EXPECT_EQ(classifyWait(row, waitFramesOf(lock)).kind, WaitKind::kMutex);
  EXPECT_EQ(classifyWait(row, waitFramesOf(bare)).kind, WaitKind::kPark);
}

// Go's symbol tables name its assembly functions with their ABI
// ("runtime.futex.abi0"), and a wait still going when recording stopped may
// have that leaf alone for a stack.
TEST(WaitKind, GoAssemblyNamesMatchWithTheirAbiSuffix) {
  std::vector<NamedFrame> leaf = {{"runtime.futex.abi0", false}};
  std::vector<NamedFrame> park = {{"runtime.futex.abi0", false}, {"runtime.notesleep", false}};
  std::vector<NamedFrame> other = {{"runtime.futexabi0", false}};
  LockInterval row = futexWait(0x9000, kFutexWaitPrivate, 0, WaitObject::kUnknown);
  EXPECT_EQ(classifyWait(row, waitFramesOf(leaf)).kind, WaitKind::kPark);
  EXPECT_EQ(classifyWait(row, waitFramesOf(park)).kind, WaitKind::kPark);
  EXPECT_EQ(classifyWait(row, waitFramesOf(other)).kind, WaitKind::kFutex);
}

TEST(WaitKind, OldTracesAreClassifiedByTheirEntryPoint) {
  struct Case {
    std::vector<std::string_view> names;
    WaitKind kind;
  };
  for (const Case& c : std::vector<Case>{
           {{"__lll_lock_wait", "pthread_mutex_lock@@GLIBC_2.2.5"}, WaitKind::kMutex},
           {{"__futex_abstimed_wait_common", "___pthread_cond_wait"}, WaitKind::kCondvar},
           // The mutex a condvar wait re-takes is nearer the leaf: a mutex wait.
           {{"__lll_lock_wait", "__pthread_mutex_cond_lock", "___pthread_cond_wait"},
            WaitKind::kMutex},
           {{"__futex_abstimed_wait_common", "__new_sem_wait_slow64"}, WaitKind::kSemaphore},
           {{"__futex_abstimed_wait_common", "__pthread_clockjoin_ex"}, WaitKind::kJoin},
           {{"__futex_abstimed_wait_common", "__pthread_rwlock_wrlock_full64"}, WaitKind::kRwlock},
           {{"__futex_abstimed_wait_common"}, WaitKind::kFutex},
       }) {
    WaitClass wait = classifyWait(oldFutexWait(0x5000), libcFrames(c.names));
    EXPECT_EQ(wait.kind, c.kind) << c.names.back();
    if (isLockKind(c.kind)) {
      EXPECT_EQ(wait.holder_source, HoldSource::kInferred);
    }
  }
}

TEST(WaitKind, EntryPointsCountOnlyInTheCLibrary) {
  // A program's own function named like a libc one is not an entry point.
  std::vector<NamedFrame> frames = {{"sem_wait_for_jobs", false}};
  EXPECT_EQ(classifyWait(oldFutexWait(0x5000), waitFramesOf(frames)).kind, WaitKind::kFutex);
}

TEST(WaitKind, FutexOperationsDecideWhenNoLayoutMatched) {
  EXPECT_EQ(classifyWait(futexWait(0x5000, 6 | 128, 0, WaitObject::kUnknown), {}).kind,
            WaitKind::kMutex);  // FUTEX_LOCK_PI
  EXPECT_EQ(classifyWait(futexWait(0x5000, kFutexWaitPrivate, 2, WaitObject::kUnknown), {}).kind,
            WaitKind::kMutex);  // glibc's low-level lock protocol
  WaitClass unknown =
      classifyWait(futexWait(0x5000, kFutexWaitPrivate, 7, WaitObject::kUnknown), {});
  EXPECT_EQ(unknown.kind, WaitKind::kFutex);
  EXPECT_FALSE(blamesHolder(unknown.kind));
}

TEST(WaitKind, ProbedCallsKeepTheirKindAndTheirExactReleaser) {
  LockInterval row{.time = 1,
                   .acquired_time = 5,
                   .release_time = 9,
                   .pid = 100,
                   .tid = kWaiter,
                   .address = 0x5000,
                   .lock_kind = static_cast<uint64_t>(LockKind::kRwlockRead),
                   .flags = format::kLockContended,
                   .releaser_tid = kOther};
  WaitClass wait = classifyWait(row, {});
  EXPECT_EQ(wait.kind, WaitKind::kRwlock);
  EXPECT_EQ(wait.holder_tid, kOther);
  EXPECT_EQ(wait.holder_source, HoldSource::kExact);
  row.lock_kind = static_cast<uint64_t>(LockKind::kCustom);
  EXPECT_EQ(classifyWait(row, {}).kind, WaitKind::kCustom);
  // A Go Cond.Wait row: a condition, named by its signaller, never a lock.
  row.lock_kind = static_cast<uint64_t>(LockKind::kCondvar);
  wait = classifyWait(row, {});
  EXPECT_EQ(wait.kind, WaitKind::kCondvar);
  EXPECT_FALSE(blamesHolder(wait.kind));
  EXPECT_EQ(wait.holder_tid, kOther);
}

TEST(WaitKind, NamesRoundTrip) {
  for (WaitKind kind : kAllWaitKinds) EXPECT_EQ(waitKindByName(waitKindName(kind)), kind);
  EXPECT_FALSE(waitKindByName("lock").has_value());
}

}  // namespace
}  // namespace incise::analyzer
