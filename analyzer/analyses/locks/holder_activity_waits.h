// The waits on one lock, indexed for what a holder's critical section asks
// of them: how long other threads waited during [a, b), and which threads.
//
// HolderActivityBuilder measures every retired section and every off-CPU
// span of a holder against the waits on its lock. Scanning the lock's waits
// each time costs sections x waits on a hot lock (a 40-s trace with one
// such lock took minutes). A lock with at most kScanUpTo waits kept is
// still scanned (the cheapest for the many locks with few waits); past
// that, each question costs O(log n) plus what it reports:
//  - waitedDuring: the integral over [a, b) of the number of waits in
//    progress (WaitingIntegral: a breakpoint at every wait start and end),
//    for the lock minus the asking thread's own; of every wait, or only of
//    those marked `focus` (the threads a filtered report is about);
//  - forEachWaiter: the waits overlapping [a, b) that started at or after
//    `since`, found through a tree of the largest end over the waits in
//    start order, so waits that ended before `a` cost nothing.
//
// Waits arrive in start order (TimeOrderedRows hands rows so), and
// questions are about times before which every wait has been added
// (HolderActivityBuilder asks about times before the settled `now`). A wait
// that comes later than that (only a file whose chunk headers lie about
// their times makes one) counts from the latest time already asked about or
// added, not from its own start: the answers stay bounded in cost, not
// exact, for such a file. Nothing may ask about times before the last
// prune() bound.
//
//   uint64_t work = 0;
//   LockWaitIndex waits(&work);
//   waits.add({.start = 1500, .end = 5000, .tid = 2});
//   waits.add({.start = 3200, .end = 5500, .tid = 3});
//   waits.waitedDuring(1000, 5000, /*holder=*/1);                 // 3500 + 1800
//   waits.forEachWaiter(2000, 3000, /*since=*/0, 1, [](uint64_t tid) { ... });  // 2
//   waits.prune(5000);                    // nothing will ask about times before 5000
#pragma once

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace incise::analyzer {

// The running integral of how many waits were in progress: integral(t) =
// the waiting ns of every wait added, up to t. Waits are added in start
// order, at or after the latest time asked about.
class WaitingIntegral {
 public:
  explicit WaitingIntegral(uint64_t* work) : work_(work) {}
  void add(uint64_t start, uint64_t end);
  // Sweeps forward to `time` if it is past the sweep (every wait starting
  // before `time` must have been added).
  uint64_t at(uint64_t time);
  void prune(uint64_t bound);
  uint64_t swept() const { return swept_; }
  bool idleAfter(uint64_t bound) const;  // no wait in progress at or after `bound`

 private:
  // `integral` at `time`; `waiting`: waits in progress just after `time`.
  struct Point {
    uint64_t time = 0;
    uint64_t integral = 0;
    uint64_t waiting = 0;
  };
  void sweepTo(uint64_t time);
  void addPoint(uint64_t time, bool wait_starts);

  std::vector<Point> points_;   // by time, from first_point_
  size_t first_point_ = 0;      // points before it are dropped (compacted now and then)
  std::vector<uint64_t> ends_;  // a min-heap: ends not swept yet
  uint64_t swept_ = 0;          // points_ describe the integral up to here
  uint64_t latest_end_ = 0;
  uint64_t* work_;
};

class LockWaitIndex {
 public:
  struct Wait {
    uint64_t start = 0;
    uint64_t end = 0;
    uint64_t tid = 0;
    bool focus = true;
  };

  // `work`, when given, counts the steps taken (entries read, tree nodes
  // visited, breakpoints written): tests check it grows linearly. Without
  // `track_focus` every wait is in focus.
  explicit LockWaitIndex(uint64_t* work = nullptr, bool track_focus = false)
      : work_(work ? work : &own_work_),
        track_focus_(track_focus),
        waiting_(work_),
        focus_waiting_(work_) {}
  LockWaitIndex(const LockWaitIndex&) = delete;
  LockWaitIndex& operator=(const LockWaitIndex&) = delete;

  // A zero-length wait overlaps nothing and is not kept.
  void add(Wait wait);
  // Other threads' (not `holder`'s) waiting that overlapped [a, b), in ns;
  // with `focus_only`, of the waits marked focus.
  uint64_t waitedDuring(uint64_t a, uint64_t b, uint64_t holder, bool focus_only = false);
  // visit(tid) for each wait of a thread other than `holder` that overlaps
  // [a, b) and started at or after `since`.
  template <typename Visit>
  void forEachWaiter(uint64_t a, uint64_t b, uint64_t since, uint64_t holder, Visit&& visit);
  // Nothing will ask about times before `bound`: forgets what only such
  // questions need.
  void prune(uint64_t bound);

  bool empty() const { return waits_.empty(); }
  size_t size() const { return waits_.size(); }

  static constexpr size_t kScanUpTo = 32;
  bool indexed() const { return indexed_; }  // answering from the integrals and the tree

 private:
  void buildIndex();
  void integralsAdd(const Wait& wait);
  uint64_t scanWaited(uint64_t a, uint64_t b, uint64_t holder, bool focus_only);
  void buildTree(size_t capacity);
  void updateLeaf(size_t index);
  template <typename Visit>
  void visitTree(size_t node, size_t node_lo, size_t node_hi, size_t lo, size_t hi, uint64_t after,
                 uint64_t holder, Visit& visit);

  uint64_t own_work_ = 0;
  uint64_t* work_;
  bool track_focus_;
  bool indexed_ = false;           // past kScanUpTo: the integrals and the tree below
  uint64_t asked_until_ = 0;       // the latest end of a span asked about
  std::vector<Wait> waits_;        // by start
  std::vector<uint64_t> max_end_;  // tree over waits_: node 1 covers [0, capacity_)
  size_t capacity_ = 0;            // leaves (a power of two, >= waits_.size())
  size_t kept_at_compaction_ = 0;
  uint64_t earliest_start_ = 0;    // a later wait counts from here (see above)
  WaitingIntegral waiting_;        // every thread's
  WaitingIntegral focus_waiting_;  // the focus waits'
  // Per waiting thread, and per waiting thread's focus waits (key 2 tid + 1).
  std::unordered_map<uint64_t, WaitingIntegral> waiting_of_;
};

// ---- templates ---------------------------------------------------------------

template <typename Visit>
void LockWaitIndex::forEachWaiter(uint64_t a, uint64_t b, uint64_t since, uint64_t holder,
                                  Visit&& visit) {
  if (b <= a || waits_.empty()) return;
  if (!indexed_) {
    for (const Wait& w : waits_) {
      ++*work_;
      if (w.start >= since && w.start < b && w.end > a && w.tid != holder) visit(w.tid);
    }
    return;
  }
  auto by_start = [](const Wait& w, uint64_t time) { return w.start < time; };
  size_t lo = std::lower_bound(waits_.begin(), waits_.end(), since, by_start) - waits_.begin();
  size_t hi = std::lower_bound(waits_.begin(), waits_.end(), b, by_start) - waits_.begin();
  *work_ += 2;
  if (lo < hi) visitTree(1, 0, capacity_, lo, hi, a, holder, visit);
}

template <typename Visit>
void LockWaitIndex::visitTree(size_t node, size_t node_lo, size_t node_hi, size_t lo, size_t hi,
                              uint64_t after, uint64_t holder, Visit& visit) {
  ++*work_;
  if (node_hi <= lo || hi <= node_lo || max_end_[node] <= after) return;
  if (node_hi - node_lo == 1) {
    if (waits_[node_lo].tid != holder) visit(waits_[node_lo].tid);
    return;
  }
  size_t mid = node_lo + (node_hi - node_lo) / 2;
  visitTree(2 * node, node_lo, mid, lo, hi, after, holder, visit);
  visitTree(2 * node + 1, mid, node_hi, lo, hi, after, holder, visit);
}

}  // namespace incise::analyzer
