// Who woke the longest lock waiters, and from where, followed back a few
// steps: "A waited 80 ms; B woke it at release (B's stack), B had itself
// waited 60 ms for C, ...".
//
// The waker of a wait [start, end) is taken from the last wake-up of the
// waiter inside the wait (Wakeup rows: waker -> wakee, with the waker's
// stack); without one, or for a goroutine's wait (Go: the goroutine waited,
// not its thread), from the lock row's releaser_tid (no stack). The next
// link is the waker's own longest lock wait that ended inside the previous
// wait, before the wake: the waker was itself held up meanwhile. Chains stop
// at `max_depth` links or when a thread repeats.
//
// LongestWaitChains works as the waits and wake-ups stream past in time
// order: a wait's chain is made once time has passed its end (its last
// wake-up and every earlier link are known then), and only if it is among
// the longest of the waits added so far (a wait's length is known when it
// is added, so one that is not can never be). Only waits added with
// `may_start` start chains (the focus of a filtered report); any wait may
// be a link. It keeps the waits in progress, the `longest` chains,
// and the settled waits a later chain may still link to: those that ended
// at most (max_depth - 2) x the longest settled wait before the earliest
// start of a wait in progress (a link ends inside the wait before it).
//
//   auto chains = wakeChains(timeline, wakeups, /*longest=*/5, /*max_depth=*/4);
//   for (const WakeLink& l : chains[0].links) print(l.wait.tid, l.waker_tid, l.waker_stack_id);
//
//   LongestWaitChains longest(5, 4);
//   longest.addWait(wait);        // as its lock row arrives (start order)
//   longest.add(wakeup);          // wake-ups in time order, after the waits starting by then
//   longest.settle(now);          // everything before `now` has been added
//   std::vector<WakeChain> chains = longest.finish();
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <span>
#include <unordered_map>
#include <vector>

#include "analyzer/analyses/locks/critical_sections.h"
#include "format/event_kinds.h"

namespace incise::analyzer {

enum class WakeSource { kNone, kWakeupEvent, kReleaser };

struct WakeLink {
  LockWait wait;  // the waiting this link explains
  WakeSource source = WakeSource::kNone;
  uint64_t waker_pid = 0;  // 0 with kNone, or for an interrupt
  uint64_t waker_tid = 0;
  uint64_t waker_stack_id = 0;  // 0 = none (kReleaser has none)
  uint64_t wake_time = 0;
};

struct WakeChain {
  std::vector<WakeLink> links;  // links[0] explains one of the longest waits
};

class LongestWaitChains {
 public:
  LongestWaitChains(size_t longest, size_t max_depth);
  void addWait(const LockWait& wait, bool may_start = true);
  // Wake-ups in time order (equal times: the later one wins, as in a file).
  void add(const format::Wakeup& wakeup);
  // Every wait and wake-up before `now` has been added.
  void settle(uint64_t now);
  // The `longest` longest waits (ties: earlier first), each with its chain.
  std::vector<WakeChain> finish();

  size_t waitsKept() const;
  // Steps taken (waits read to make chains and to match wake-ups), for tests.
  uint64_t work() const { return work_; }

 private:
  struct Longer {
    bool operator()(const LockWait& a, const LockWait& b) const;
  };
  struct Wait {
    LockWait wait;
    bool may_start = true;
    bool woken = false;  // by a wake-up row inside the wait; then:
    uint64_t waker_pid = 0;
    uint64_t waker_tid = 0;
    uint64_t waker_stack_id = 0;
    uint64_t wake_time = 0;
  };
  WakeLink explain(const Wait& w) const;
  const Wait* wakersOwnWait(uint64_t tid, uint64_t from, uint64_t to) const;
  WakeChain chainOf(const Wait& w) const;
  void keepIfLongest(const Wait& w);

  size_t longest_;
  size_t max_depth_;
  uint64_t longest_settled_ = 0;
  // Per waiter: its waits in progress and its settled waits (by end, as
  // settled). A thread waits on one thing at a time, but the goroutines
  // parked from one thread may be thousands: a wake-up of the thread reads
  // only its own waits, and a goroutine's wait is found by its end.
  struct Waiter {
    std::vector<Wait> thread_waits;                 // by start
    std::multimap<uint64_t, Wait> goroutine_waits;  // by end, then start
    std::deque<Wait> settled;
    bool waiting() const { return !thread_waits.empty() || !goroutine_waits.empty(); }
  };
  // Takes the wait of `waiter` that ends at `end` out of those in progress.
  static Wait takeEndingAt(Waiter& waiter, uint64_t end);
  std::unordered_map<uint64_t, Waiter> waiters_;
  std::multiset<std::pair<uint64_t, uint64_t>> ends_;  // (end, waiter) of waits in progress
  std::multiset<uint64_t> starts_;                     // of waits in progress
  size_t settled_count_ = 0;
  size_t prune_at_ = 0;  // settled waits are dropped when there are this many (amortized)
  std::vector<std::pair<LockWait, WakeChain>> chains_;  // the longest so far, longest first
  std::multiset<LockWait, Longer> longest_added_;       // of the waits that may start a chain
  mutable uint64_t work_ = 0;
};

// The same over a whole timeline and its wake-ups (sorted by time here, stable).
std::vector<WakeChain> wakeChains(const LockTimeline& timeline,
                                  std::span<const format::Wakeup> wakeups, size_t longest,
                                  size_t max_depth);

}  // namespace incise::analyzer
