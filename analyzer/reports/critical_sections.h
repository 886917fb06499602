// Critical sections and lock waits, recovered from lock rows.
//
// A trace records locks in one of two modes (format::LockFlags):
//  - `all`: one row per acquisition; the critical section [acquired, release)
//    is exact and the wait is [request, acquired).
//  - `contended`: one row per futex wait (kLockContendedOnly): the wait
//    [time, acquired_time) and the thread that woke the waiter
//    (releaser_tid). Uncontended acquisitions are invisible, so the
//    releaser's critical section is inferred: it ends at the wake and starts
//    at the releaser's previous acquisition of that lock if one was recorded
//    since the lock was last released, else at the later of the waiter's
//    wait start and that last release. Such sections carry `inferred`.
//
// Locks are per process: a lock is (pid, address).
//
//   LockTimeline timeline = buildLockTimeline(lock_rows);
//   for (const CriticalSection& s : timeline.sections) hold += s.end - s.start;
//   for (const LockWait& w : timeline.waits) wait += w.end - w.start;
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "format/event_kinds.h"

namespace incise::analyzer {

struct LockId {
  uint64_t pid = 0;
  uint64_t address = 0;
  friend auto operator<=>(const LockId&, const LockId&) = default;
};

struct CriticalSection {
  LockId lock;
  uint64_t tid = 0;   // the holder
  uint64_t kind = 0;  // format::LockKind
  uint64_t stack_id =
      0;  // acquire site; 0 = unknown (an inferred section without a recorded acquire)
  uint64_t request = 0;    // acquire call or wait start; == start when unknown
  uint64_t start = 0;      // acquired
  uint64_t end = 0;        // released
  bool contended = false;  // the acquire had to wait
  bool inferred = false;   // contended mode: bounds inferred from a wake (see above)
  uint64_t duration() const { return end - start; }
};

struct LockWait {
  LockId lock;
  uint64_t tid = 0;  // the waiter
  uint64_t kind = 0;
  uint64_t stack_id = 0;
  uint64_t start = 0;         // request / wait start
  uint64_t end = 0;           // acquired / woken
  uint64_t releaser_tid = 0;  // 0 = unknown
  uint64_t duration() const { return end - start; }
};

// One acquisition as counted by `incise locks` (every row but failed trylocks).
struct Acquisition {
  LockId lock;
  uint64_t tid = 0;
  uint64_t kind = 0;
  uint64_t stack_id = 0;
  uint64_t time = 0;  // request
  uint64_t wait_ns = 0;
  bool contended = false;
};

enum class LockRecordingMode { kNone, kAll, kContended, kMixed };

struct LockTimeline {
  LockRecordingMode mode = LockRecordingMode::kNone;
  std::vector<Acquisition> acquisitions;  // row order
  std::vector<CriticalSection> sections;  // sorted by (tid, start)
  std::vector<LockWait> waits;            // sorted by (lock, start): contended acquisitions only
  uint64_t try_failed = 0;                // trylocks that did not get the lock
  uint64_t recursive = 0;                 // re-acquires by the holder: no section of their own
  uint64_t unreleased = 0;                // `all` rows with no release seen (trace ended)
  uint64_t malformed = 0;                 // rows whose times run backwards: skipped
  uint64_t inferred_sections = 0;
};

LockTimeline buildLockTimeline(std::span<const format::LockInterval> rows);

const char* lockModeName(LockRecordingMode mode);

}  // namespace incise::analyzer
