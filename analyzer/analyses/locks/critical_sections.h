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
// aggregate (incise locks) or replay time (incise correlate): it hands each
// acquisition and `all`-mode section on as its row arrives and keeps nothing
// of them. Contended-mode futex waits are kept only while in progress: rows
// come in request-time order (TimeOrderedRows), so once a row at time t
// arrives every wait that woke before t has arrived too, and the holders of
// those wakes are inferred then, in wake order per lock. What stays is the
// waits not yet settled (in a heap by wake time) and per lock the
// acquisitions that a later wake may still turn into a section (those since
// the lock's last wake but one), not one record per wait.
//
//   LockTimeline timeline = buildLockTimeline(lock_rows);   // or LockTimelineBuilder
//   for (const CriticalSection& s : timeline.sections) hold += s.end - s.start;
//   for (const LockWait& w : timeline.waits) wait += w.end - w.start;
//
//   LockRowStream stream({.acquisition = count, .section = addHold});
//   trace.forEachRow<format::LockInterval>([&](const auto& row) { stream.add(row); });
//   LockRowCounts counts = stream.finish();  // emits the last inferred sections
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <unordered_map>
#include <vector>

#include "format/event_kinds.h"

namespace incise::analyzer {

struct LockId {
  uint64_t pid = 0;
  uint64_t address = 0;
  friend auto operator<=>(const LockId&, const LockId&) = default;
};

// Where a section's start comes from. Only a Go mutex's holds while others
// waited (go_mutex_holds.h) may start at something other than their
// acquisition, which their slow paths did not see.
enum class HoldStart : uint8_t {
  kAcquired,       // the acquisition (recorded, or inferred from a wake: see `inferred`)
  kAfterPrevious,  // the previous holder's release: the hold is at most this long
  kEpisodeStart,   // the first waiter's arrival: the part of the hold others waited for
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
  uint64_t goid = 0;       // Go: the goroutine that released it; 0 = not Go or not known
  HoldStart start_from = HoldStart::kAcquired;
  bool go_slow_paths = false;  // a Go mutex's hold while others waited (go_mutex_holds.h)
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
  // A Go goroutine's wait (its id): the goroutine, not its thread, waited,
  // so the thread's own wake-ups do not end it. 0: a thread's wait, or a
  // goroutine whose id was not read.
  uint64_t goid = 0;
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

// Go mutex holds by where their start came from (go_mutex_holds.h), and the
// slow unlocks that lay in no recorded wait.
struct GoHoldCounts {
  uint64_t acquired = 0;
  uint64_t after_previous = 0;
  uint64_t episode_start = 0;
  uint64_t unplaced_releases = 0;
  uint64_t holds() const { return acquired + after_previous + episode_start; }
};

struct LockRowCounts {
  LockRecordingMode mode = LockRecordingMode::kNone;
  uint64_t try_failed = 0;  // trylocks that did not get the lock
  uint64_t recursive = 0;   // re-acquires by the holder: no section of their own
  uint64_t unreleased = 0;  // `all` rows with no release seen (trace ended)
  uint64_t malformed = 0;   // rows whose times run backwards: skipped
  uint64_t inferred_sections = 0;
  GoHoldCounts go_holds;
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
  // Recorded sections come with their row, inferred ones once their wake settles.
  std::function<void(const CriticalSection&)> section;
  std::function<void(const LockWait&)> wait;  // contended acquisitions
};

class GoMutexHolds;
class LockRowStream {
 public:
  explicit LockRowStream(LockRowSinks sinks);
  ~LockRowStream();
  // Rows in time order (TimeOrderedRows); a row earlier than the one before
  // only delays the inference (it settles the waits woken before its time).
  // Go lockSlow rows (kLockGoSlowPath) make no inferred sections: their
  // holds come with the releases.
  void add(const format::LockInterval& row);
  // A Go mutex's slow unlock, merged by time with the lock rows: the hold it
  // ends is handed on now (go_mutex_holds.h).
  void add(const format::LockRelease& row);
  // Every row before `time` has been added: settles the waits woken before it
  // (as add does) while time passes without lock rows.
  void settleBefore(uint64_t time);
  // Infers the holders of the waits still in progress, hands those sections
  // on, and returns the counts. Call once, after the last row.
  LockRowCounts finish();

  // Lower bounds on the start of any section still to be handed on, for one
  // holder thread or one lock, besides those of rows not added yet (which
  // start at or after their row's time). UINT64_MAX: none.
  uint64_t pendingSectionStart(uint64_t tid) const;
  uint64_t pendingSectionStart(const LockId& lock) const;
  size_t waitsInProgress() const { return in_progress_.size(); }

 private:
  // A contended-mode wait, as much as the holder inference needs.
  struct FutexWait {
    LockId lock;
    uint64_t start = 0;
    uint64_t end = 0;
    uint64_t stack_id = 0;
    uint64_t arrival = 0;  // ties among equal (wake, lock, waiter): row order
    uint32_t tid = 0;
    uint32_t releaser_tid = 0;
    uint8_t kind = 0;
  };
  struct WakesLater {
    bool operator()(const FutexWait& a, const FutexWait& b) const;
  };
  // An acquisition a later wake may still end (the releaser's section
  // starts there).
  struct Holding {
    uint64_t tid = 0;
    uint64_t time = 0;  // acquired
    uint64_t request = 0;
    uint64_t stack_id = 0;
  };
  struct LockState {
    bool woken = false;
    uint64_t wake = 0;          // the wake being (or last) settled
    uint64_t last_release = 0;  // the wake before it
    std::vector<Holding> holdings;
    std::vector<uint64_t> releasers;        // given a section at `wake`
    std::multiset<uint64_t> waiting_since;  // starts of waits in progress
  };
  void settleWokenBefore(uint64_t time);
  void inferHolder(const FutexWait& wait, LockState& lock);
  void pin(uint64_t tid, uint64_t time);
  void unpin(uint64_t tid, uint64_t time);

  LockRowSinks sinks_;
  LockRowCounts counts_;
  std::unique_ptr<GoMutexHolds> go_holds_;
  bool saw_all_ = false;
  bool saw_contended_ = false;
  uint64_t arrivals_ = 0;
  std::vector<FutexWait> in_progress_;  // a min-heap by (wake, lock, waiter, arrival)
  std::map<LockId, LockState> locks_;   // locks with waits in progress or live acquisitions
  // Per thread: the times a section of it may still start at (its live
  // acquisitions, the starts of waits it is to end).
  std::unordered_map<uint64_t, std::multiset<uint64_t>> pins_;
};

const char* lockModeName(LockRecordingMode mode);

}  // namespace incise::analyzer
