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
// LockRowStream does the same one row at a time, for reports that only
// aggregate (incise locks): it hands each acquisition and `all`-mode section
// on as its row arrives and keeps nothing of them; only contended-mode futex
// waits are kept (56 bytes each) until finish(), because inferring the
// holders needs every wait of a lock in wake order.
//
//   LockTimeline timeline = buildLockTimeline(lock_rows);   // or LockTimelineBuilder
//   for (const CriticalSection& s : timeline.sections) hold += s.end - s.start;
//   for (const LockWait& w : timeline.waits) wait += w.end - w.start;
//
//   LockRowStream stream({.acquisition = count, .section = addHold});
//   trace.forEachRow<format::LockInterval>([&](const auto& row) { stream.add(row); });
//   LockRowCounts counts = stream.finish();  // emits the inferred sections
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
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

struct LockRowCounts {
  LockRecordingMode mode = LockRecordingMode::kNone;
  uint64_t try_failed = 0;  // trylocks that did not get the lock
  uint64_t recursive = 0;   // re-acquires by the holder: no section of their own
  uint64_t unreleased = 0;  // `all` rows with no release seen (trace ended)
  uint64_t malformed = 0;   // rows whose times run backwards: skipped
  uint64_t inferred_sections = 0;
};

struct LockTimeline : LockRowCounts {
  std::vector<Acquisition> acquisitions;  // row order
  std::vector<CriticalSection> sections;  // sorted by (tid, start)
  std::vector<LockWait> waits;            // sorted by (lock, start): contended acquisitions only
};

// `rows` sorted by time (stable), as TimeOrderedRows hands them.
LockTimeline buildLockTimeline(std::span<const format::LockInterval> rows);

// buildLockTimeline one row at a time. Without acquisitions the timeline
// keeps one record per critical section (72 bytes) and per lock wait
// (64 bytes), none per uncontended acquisition.
class LockRowStream;
class LockTimelineBuilder {
 public:
  explicit LockTimelineBuilder(bool keep_acquisitions = true);
  ~LockTimelineBuilder();
  void add(const format::LockInterval& row);
  LockTimeline finish();

 private:
  LockTimeline timeline_;
  std::unique_ptr<LockRowStream> stream_;
};

// Where LockRowStream hands what it recovers; any of them may be empty.
struct LockRowSinks {
  std::function<void(const Acquisition&)> acquisition;
  std::function<void(const CriticalSection&)> section;  // recorded at once, inferred at finish()
  std::function<void(const LockWait&)> wait;            // contended acquisitions
};

class LockRowStream {
 public:
  explicit LockRowStream(LockRowSinks sinks) : sinks_(std::move(sinks)) {}
  void add(const format::LockInterval& row);
  // Infers the holders' sections of contended mode, hands them on, and
  // returns the counts. Call once, after the last row.
  LockRowCounts finish();

 private:
  // A contended-mode wait, as much as the holder inference needs.
  struct FutexWait {
    LockId lock;
    uint64_t start = 0;
    uint64_t end = 0;
    uint64_t stack_id = 0;
    uint32_t tid = 0;
    uint32_t releaser_tid = 0;
    uint8_t kind = 0;
  };
  void inferHolderSections();

  LockRowSinks sinks_;
  LockRowCounts counts_;
  bool saw_all_ = false;
  bool saw_contended_ = false;
  std::vector<FutexWait> futex_waits_;
};

const char* lockModeName(LockRecordingMode mode);

}  // namespace incise::analyzer
