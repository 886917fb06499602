// Who woke the longest lock waiters, and from where, followed back a few
// steps: "A waited 80 ms; B woke it at release (B's stack), B had itself
// waited 60 ms for C, ...".
//
// The waker of a wait [start, end) is taken from the last wake-up of the
// waiter inside the wait (Wakeup rows: waker -> wakee, with the waker's
// stack); without one, from the lock row's releaser_tid (no stack). The next
// link is the waker's own longest lock wait that ended inside the previous
// wait, before the wake: the waker was itself held up meanwhile. Chains stop
// at `max_depth` links or when a thread repeats.
//
// WaitWakeups finds each wait's last wake-up as the wake-ups stream past in
// time order (TimeOrderedRows) and keeps only that: about 40 bytes per lock wait,
// none per wake-up.
//
//   auto chains = wakeChains(timeline, wakeups, /*longest=*/5, /*max_depth=*/4);
//   for (const WakeLink& l : chains[0].links) print(l.wait.tid, l.waker_tid, l.waker_stack_id);
//
//   WaitWakeups last_wakes(timeline);
//   for (...) last_wakes.add(wakeup);   // in time order
//   auto chains = wakeChains(timeline, last_wakes, 5, 4);
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "analyzer/reports/critical_sections.h"
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

// Per wait of a timeline, the last wake-up of the waiter inside [start, end].
class WaitWakeups {
 public:
  struct Wake {
    uint64_t waker_pid = 0;
    uint64_t waker_tid = 0;
    uint64_t stack_id = 0;
    uint64_t time = 0;
  };
  // `timeline` must outlive this.
  explicit WaitWakeups(const LockTimeline& timeline);
  // Wake-ups in time order (equal times: the later one wins, as in a file).
  void add(const format::Wakeup& wakeup);
  // The last wake-up inside timeline.waits[wait], if any.
  const Wake* lastWake(size_t wait) const { return seen_[wait] ? &wakes_[wait] : nullptr; }

 private:
  const LockTimeline& timeline_;
  std::vector<Wake> wakes_;  // per wait
  std::vector<bool> seen_;   // per wait
  // Per waiter: its waits by start, and its longest wait (waits overlapping
  // a time start at most that long before it).
  struct Waiter {
    std::vector<uint32_t> waits;
    uint64_t longest = 0;
  };
  std::unordered_map<uint64_t, Waiter> waiters_;
};

// The `longest` longest waits (ties: earlier first), each with its chain.
std::vector<WakeChain> wakeChains(const LockTimeline& timeline, const WaitWakeups& wakeups,
                                  size_t longest, size_t max_depth);
// The same from every wake-up at once (sorted by time here, stable).
std::vector<WakeChain> wakeChains(const LockTimeline& timeline,
                                  std::span<const format::Wakeup> wakeups, size_t longest,
                                  size_t max_depth);

}  // namespace incise::analyzer
