// Holds of Go sync.Mutexes while goroutines waited, from the slow paths
// alone: the lockSlow rows (format::kLockGoSlowPath: entry E, return T, the
// goroutine) and the slow unlocks (format::LockRelease rows: time R, the
// goroutine and thread).
//
// Go's Lock and Unlock are inlined compare-and-swaps that call lockSlow and
// unlockSlow only when the state word is not the plain value they expect
// (sync/mutex.go). While a goroutine is counted as a waiter (from its
// lockSlow's queueing CAS until the unlock that wakes it), or owns the
// mutexWoken or mutexStarving bit (until its own next CAS in lockSlow), the
// state word has bits besides mutexLocked: Lock's CAS(0 -> locked) fails and
// Unlock's add(-locked) leaves it nonzero. So from a waiter's queueing to
// its lockSlow return every acquisition is a lockSlow return (or a TryLock,
// which takes an unlocked mutex whatever the waiter count) and every release
// a slow unlock. The episodes when that holds are taken as the connected
// stretches of the union of the mutex's lockSlow intervals [E, T]; the part
// before queueing is at most lockSlow's spin (4 rounds of 30 PAUSEs), so an
// episode may start that much early.
//
// A hold ends at each slow unlock R, by its goroutine G. It started:
//  - at G's last lockSlow return T on the mutex, when T lies in R's episode
//    and after every other release and every other goroutine's acquisition
//    on it (kAcquired: exact);
//  - else at the last of those, when one lies in the episode: G took the
//    mutex after it without lockSlow (a TryLock), so the hold is at most
//    that long (kAfterPrevious); after G's own release, from that
//    unlockSlow's return, before which G cannot take it again;
//  - else at the episode's start: G held the mutex, from an acquisition not
//    seen, when the first waiter came (kEpisodeStart); that is the part of
//    the hold others waited for.
// A slow unlock outside every recorded lockSlow (its waiter entered before
// the recording, or had not returned when it ended) starts no hold; it is
// counted. Goroutines are told apart by id, or by thread when the binary
// gave no ids.
//
// Streaming: lock rows come in request-time order and releases in time
// order, merged (TimeOrderedRows, time_merge.h), so at a release every
// lockSlow that entered before it is known. Kept per mutex: its current
// episode and the acquisitions since its last release.
//
//   GoMutexHolds holds([&](const CriticalSection& s) { total += s.duration(); });
//   holds.add(lock_row);      // rows with kLockGoSlowPath
//   holds.add(release_row);
//   holds.settleBefore(now);  // episodes that ended before now close
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "analyzer/analyses/locks/critical_sections.h"
#include "format/event_kinds.h"

namespace incise::analyzer {

class GoMutexHolds {
 public:
  explicit GoMutexHolds(std::function<void(const CriticalSection&)> section);

  // A lockSlow row (kLockGoSlowPath), in request-time order with the releases.
  void add(const format::LockInterval& row);
  // A slow unlock; emits the hold it ends, if it lies in an episode.
  void add(const format::LockRelease& row);
  // Every row before `time` has been added: episodes ending before it close.
  void settleBefore(uint64_t time);

  // Lower bound on the start of any hold still to be emitted (all mutexes,
  // or one); UINT64_MAX: none.
  uint64_t pendingStart() const { return floors_.empty() ? UINT64_MAX : *floors_.begin(); }
  uint64_t pendingStart(const LockId& lock) const;

  const GoHoldCounts& counts() const { return counts_; }

 private:
  struct Acquisition {
    uint64_t goid = 0;
    uint64_t tid = 0;
    uint64_t request = 0;  // lockSlow's entry
    uint64_t time = 0;     // its return
    uint64_t stack_id = 0;
  };
  struct Mutex {
    uint64_t episode_start = 0;
    uint64_t episode_end = 0;
    uint64_t previous = 0;         // the last release in the episode; 0 = none
    uint64_t previous_return = 0;  // its unlockSlow's return
    uint64_t previous_goid = 0;    // and who released
    uint64_t previous_tid = 0;
    uint64_t floor = 0;                     // its entry in floors_
    std::vector<Acquisition> acquisitions;  // returns not yet followed by a release
  };
  static bool sameGoroutine(uint64_t goid_a, uint64_t tid_a, const format::LockRelease& r) {
    return goid_a != 0 && r.goid != 0 ? goid_a == r.goid : tid_a == r.tid;
  }
  void setFloor(Mutex& m, uint64_t floor);
  void close(std::map<LockId, Mutex>::iterator it);

  std::function<void(const CriticalSection&)> section_;
  GoHoldCounts counts_;
  std::map<LockId, Mutex> mutexes_;       // mutexes in an episode
  std::multimap<uint64_t, LockId> ends_;  // by episode end
  std::multiset<uint64_t> floors_;        // each mutex's lower bound on holds to come
};

}  // namespace incise::analyzer
