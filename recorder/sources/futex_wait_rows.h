// FutexWaitRows: one lock row per futex wait, joined from the three
// scheduler records that see it (bpf/sched.bpf.c):
//   - the switch where the thread blocks inside futex(2) (EVENT_FUTEX_SWITCH:
//     the wait's start, its facts and its stack);
//   - the wake-up of that thread (its waker, the waker's stack, and whether
//     the waker was releasing a futex or exiting);
//   - the next switch onto a CPU of that thread (the wait's end).
// The row: time = block, acquired_time = switch-in, address = the futex
// word, kind kFutex, flags kLockContended | kLockContendedOnly |
// kLockFutexFacts, releaser = the waker when it was releasing a futex (a
// mutex unlock, sem_post, condvar signal) or exiting (a joined thread),
// never a timer or a signal; the futex op, value, object and holder as read.
//
// An owner read from the lock that /proc shows as a thread of the waiter's
// process is marked kLockHolderChecked; one it does not show is kept
// unchecked, for the analyzer to check against the trace. A wake-up can reach the ring before the
// block it ends (the waker's CPU reserves its record between the sleeper queueing itself and its
// switch), so a thread's last wake-up since it last ran is kept for its next block. Memory: per
// thread at most one wait in progress and one early wake-up, dropped at the thread's exit.
//
//   FutexWaitRows waits([](uint32_t pid, uint32_t tid) { return isThreadOf(pid, tid); });
//   waits.onBlock(block);                                   // EVENT_FUTEX_SWITCH
//   waits.onWake(wake);                                     // EVENT_WAKEUP
//   if (auto row = waits.onSwitchIn(next_tid, time)) sink.append(*row);
//   for (const auto& row : waits.finish(end_time)) sink.append(row);  // still blocked
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "format/event_kinds.h"

namespace incise::recorder {

struct FutexBlock {
  uint64_t time = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t address = 0;
  uint32_t op = 0;
  uint32_t value = 0;
  uint32_t object = 0;
  uint32_t holder_tid = 0;    // the owner the lock records, not checked yet
  uint32_t holder_state = 0;  // format::HolderState when the wait began; 0 = unknown
  uint64_t stack_id = 0;
  uint64_t goid = 0;  // Go programs: the goroutine the thread ran; 0 = none
};

struct FutexWake {
  uint64_t time = 0;
  uint32_t waker_pid = 0;
  uint32_t waker_tid = 0;
  uint32_t wakee_tid = 0;
  bool releases = false;  // in a futex wake, or exiting
  uint64_t stack_id = 0;
};

class FutexWaitRows {
 public:
  // Whether `tid` is a thread of process `pid`: an owner read from user
  // memory that is gets kLockHolderChecked; an empty check checks none.
  using ThreadCheck = std::function<bool(uint32_t pid, uint32_t tid)>;
  explicit FutexWaitRows(ThreadCheck is_thread_of) : is_thread_of_(std::move(is_thread_of)) {}

  void onBlock(const FutexBlock& block);
  void onWake(const FutexWake& wake);
  // `tid` was switched onto a CPU at `time`: the row of the wait it ends.
  std::optional<format::LockInterval> onSwitchIn(uint32_t tid, uint64_t time);
  void onThreadExit(uint32_t tid);
  // Waits still in progress at the end of the recording, ended at `time`
  // and flagged kLockWaitUnfinished.
  std::vector<format::LockInterval> finish(uint64_t time);
  size_t waitsInProgress() const { return blocked_.size(); }
  // Those of them whose object may have a holder (waitObjectMayHaveHolder).
  size_t holderWaitsInProgress() const { return holder_waits_; }

 private:
  struct Wait {
    FutexBlock block;
    std::optional<FutexWake> wake;
    bool holder_checked = false;
  };
  format::LockInterval rowOf(const Wait& wait, uint64_t end) const;
  void forget(std::unordered_map<uint32_t, Wait>::iterator it);

  ThreadCheck is_thread_of_;
  std::unordered_map<uint32_t, Wait> blocked_;           // by waiter tid
  std::unordered_map<uint32_t, FutexWake> early_wakes_;  // by wakee tid, since it last ran
  size_t holder_waits_ = 0;                              // in blocked_
};

}  // namespace incise::recorder
