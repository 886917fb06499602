// Wait kinds: what a lock row's wait was waiting for, decided once for every
// report (locks, waits, correlate, diff).
//
// A futex is only a word; a thread waits on it for a mutex, an rwlock, a
// condition variable, a semaphore, a thread to exit, or a runtime parking
// its thread. Only the lock kinds have a holder who keeps the waiter out, so
// only they may blame a holder for the time waited; a condvar, semaphore,
// join or park wait ends when someone else makes an event happen (a
// signaller, a poster, an exiting thread, an unparker).
//
// The kind comes from, in order (docs/waits.md lists every rule):
//  1. rows from lock-call probes (`--locks all`, `--lock-probe`): the
//     probed function's kind;
//  2. the runtime's frames on the wait's stack (Go's notesleep, the JVM's
//     Parker::park): park, though it may wait through a condvar;
//  3. the futex facts recorded with the wait (format 2.2): the memory at
//     the address matched against the C library's layouts (object), the
//     futex operation and the value waited for;
//  4. the C library entry point on the wait's stack (pthread_cond_wait,
//     sem_wait, pthread_join, __lll_lock_wait, ...): what older traces,
//     which carry no facts, have;
//  5. else futex: a futex whose protocol is not known.
// The object is the lock, condvar or semaphore itself (the futex word minus
// its offset in the object: an rwlock waits on three words, a condvar on
// two), so every wait on one object counts in one group.
//
// Holders: a lock's holder read from the lock at the wait (mutex __owner,
// rwlock __cur_writer, a PI futex word), or the thread joined, is exact;
// else, for lock kinds, the thread that woke the waiter is taken as the one
// that held it (inferred). For condvars, semaphores and parks the waker
// (signaller, poster, unparker) is what ended the wait: it is the cause, not
// a holder.
//
//   WaitFrames frames = waitFramesOf(names_leaf_first);   // from the wait's user stack
//   WaitClass wait = classifyWait(row, frames);
//   if (blamesHolder(wait.kind)) feedToLockAnalysis(row, wait.object);
//   std::cout << waitKindName(wait.kind) << " " << holdSourceName(wait.holder_source);
//
// Reports over a trace use WaitClassifier (trace_wait_kinds.h), which names
// the stacks' frames once per stack.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "format/event_kinds.h"

namespace incise::analyzer {

enum class WaitKind : uint8_t {
  // Locks: a holder keeps the waiter out.
  kMutex,
  kRwlock,
  kSpin,
  kCustom,  // a --lock-probe function pair
  // Events: the wait ends when another thread makes something happen.
  kCondvar,
  kSemaphore,
  kJoin,
  kPark,   // a runtime's scheduler parking a thread (Go, JVM)
  kFutex,  // a futex whose protocol is not known
};

inline constexpr std::array<WaitKind, 9> kAllWaitKinds = {
    WaitKind::kMutex,     WaitKind::kRwlock, WaitKind::kSpin, WaitKind::kCustom, WaitKind::kCondvar,
    WaitKind::kSemaphore, WaitKind::kJoin,   WaitKind::kPark, WaitKind::kFutex};

// "mutex", "rwlock", "spin", "custom", "condvar", "semaphore", "join", "park", "futex".
std::string_view waitKindName(WaitKind kind);
std::optional<WaitKind> waitKindByName(std::string_view name);

// Mutex, rwlock, spin, custom: the kinds `incise locks` lists.
bool isLockKind(WaitKind kind);
// Whether the time a wait of this kind took may be blamed on a holder (the
// correlate story): lock kinds only, never a join, condvar, semaphore, park
// or unknown futex.
inline bool blamesHolder(WaitKind kind) {
  return isLockKind(kind);
}
// The lock kind a lock analysis carries for a wait of lock kind `kind`
// (critical_sections.h keeps format::LockKind): a futex wait found to be on
// a mutex is a mutex there, not a futex. An rwlock's futex does not say
// whether its waiter reads or writes: kRwlockWrite stands for both (both
// are "rwlock" in every report). Not a lock kind: kFutex.
format::LockKind recordedLockKind(WaitKind kind);

enum class HoldSource : uint8_t {
  kNone,      // nobody known
  kExact,     // read from the lock itself, or a recorded critical section or join
  kInferred,  // the thread that woke the waiter
};
// "none", "exact", "inferred". How a Go mutex's hold times start (some at a
// bound, not at an acquisition seen) is in LockGroupStats::go_holds.
std::string_view holdSourceName(HoldSource source);

// What the frames of a wait's user stack say, found by name (leaf first):
// the C library entry point nearest the leaf, and what a runtime's parking
// or lock function on the stack means.
struct WaitFrames {
  std::optional<WaitKind> libc_entry;  // mutex, rwlock, condvar, semaphore, join, spin
  std::optional<WaitKind> runtime;     // park; mutex or condvar for a runtime's own ones
};
struct NamedFrame {
  std::string_view name;      // function name ("pthread_cond_wait", "runtime.notesleep")
  bool in_c_library = false;  // the frame lies in the C library or the dynamic loader
};
// `frames`: the user frames, leaf first. Symbol versions ("@@GLIBC_2.3.2")
// and parameter lists are ignored; entry points count only in the C library.
WaitFrames waitFramesOf(std::span<const NamedFrame> frames);

struct WaitClass {
  WaitKind kind = WaitKind::kFutex;
  uint64_t object = 0;      // the object's address in the process (the lock, condvar, sem_t)
  uint64_t holder_tid = 0;  // lock kinds: the holder; join: the thread joined; else the waker
  HoldSource holder_source = HoldSource::kNone;
  std::string_view rule;  // the rule that decided, as docs/waits.md names it
};

// The kind, object and holder of one lock row. `frames` from its wait stack
// (WaitFrames{} when there is none). Rows with no wait (a failed trylock, an
// uncontended acquisition in mode `all`) get their lock's kind all the same.
WaitClass classifyWait(const format::LockInterval& row, const WaitFrames& frames);

}  // namespace incise::analyzer
