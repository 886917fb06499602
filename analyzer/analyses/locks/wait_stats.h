// Statistics of waits of every kind, per object, site or thread: what
// `incise waits` prints, and the semaphore section of `incise locks`.
//
// Each wait (a lock row that waited, with its WaitClass, wait_kind.h) counts
// into the group of its kind and object (or site, or waiting thread): how
// many, the wait-time distribution, the threads that waited, and the threads
// the waits name: a lock's holder (exact when read from the lock, inferred
// from the waker otherwise), a semaphore's poster, a condvar's signaller,
// the thread joined, each with the wait time it accounts for and the stack
// it woke the waiters from (the row's releaser_stack_id); and the holders'
// states when the waits began (format::HolderState, read by the recorder).
// Memory: per group, a DurationDistribution (at most 32 KiB) and the threads
// and stacks seen, not a record per wait.
//
//   WaitStatsBuilder stats(WaitGrouping::kByObject, site_of);
//   stats.add(row, classifier.classify(row));     // every lock row, in any order
//   stats.add(summary, classifier.classify(waitRowOf(summary)));  // wait summary rows
//   for (const WaitGroupStats& g : stats.finish(3)) print(g.kind, g.object, g.holder_tid);
//   for (const WaitKindTotals& k : stats.kinds()) print(k.kind, k.wait.total);
//   per_request.add(row, classifier.classify(row), timeline.valueAt(row.tid, row.time));
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "analyzer/analyses/distributions/duration_distribution.h"
#include "analyzer/analyses/locks/lock_stats.h"
#include "analyzer/analyses/locks/wait_kind.h"
#include "format/event_kinds.h"

namespace incise::analyzer {

// kByContext: by the value of a context the waiting thread held at the
// wait's start (the caller reads it from the context's timeline).
enum class WaitGrouping { kByObject, kBySite, kByThread, kByContext };

// A goroutine (Go mutex waits carry their ids) and the waits it accounts for.
struct GoroutineWaits {
  uint64_t goid = 0;
  uint64_t waits = 0;
  uint64_t ns = 0;
};

struct WaitGroupStats {
  WaitKind kind = WaitKind::kFutex;
  uint64_t pid = 0;
  uint64_t object = 0;            // kByObject: the object; else the one waited on most
  uint64_t objects = 0;           // distinct objects in the group
  uint64_t site = 0;              // the site waiting most (kBySite: the site)
  uint64_t site_stack_id = 0;     // a stack of that site, for naming it
  uint64_t tid = 0;               // kByThread: the waiting thread
  bool by_context = false;        // kByContext: the group is `value`
  std::optional<uint64_t> value;  // nullopt: unknown
  uint64_t unfinished = 0;        // waits still going when recording stopped
  Distribution wait;
  std::vector<ThreadTime> top_waiters;  // by wait ns
  std::vector<NamedThread> top_named;   // by wait ns they account for
  // The first of top_named (0 / kNone when no wait names anyone).
  uint64_t holder_tid = 0;
  HoldSource hold_source = HoldSource::kNone;
  HolderStateCounts holder_states{};  // waits by the holder's state at their start
  // Go mutex waits: the goroutines that waited and the ones whose unlock
  // released a waiter, by waits, most first (at most top_threads each), and
  // how many distinct ones there were.
  std::vector<GoroutineWaits> goroutine_waiters;
  std::vector<GoroutineWaits> goroutine_releasers;
  uint64_t goroutines_waiting = 0;
  uint64_t goroutines_releasing = 0;
};

struct WaitKindTotals {
  WaitKind kind = WaitKind::kFutex;
  uint64_t objects = 0;
  Distribution wait;
};

// Whether a lock row is a wait: a futex wait, or a probed acquisition that
// had to wait (a failed trylock never waited).
bool isWait(const format::LockInterval& row);

class WaitStatsBuilder {
 public:
  // An empty `site_of` uses the stack id as the site.
  WaitStatsBuilder(WaitGrouping grouping, SiteOf site_of);
  // Rows that are not waits (isWait) are ignored.
  void add(const format::LockInterval& row, const WaitClass& wait) { add(row, wait, std::nullopt); }
  // kByContext: `value` is what the waiting thread held at row.time.
  void add(const format::LockInterval& row, const WaitClass& wait, std::optional<uint64_t> value);
  // The short waits a recorder counted instead of writing (`wait` classifies
  // waitRowOf(summary)): count, total and max exact, percentiles estimated.
  void add(const format::WaitSummary& summary, const WaitClass& wait,
           std::optional<uint64_t> value = std::nullopt);
  // Groups by total wait, longest first.
  std::vector<WaitGroupStats> finish(size_t top_threads) const;
  // Per kind that was seen, in kAllWaitKinds order.
  std::vector<WaitKindTotals> kinds() const;

 private:
  struct Group {
    WaitKind kind = WaitKind::kFutex;
    uint64_t pid = 0;
    uint64_t tid = 0;
    std::optional<uint64_t> value;
    uint64_t unfinished = 0;
    DurationDistribution waits;
    std::map<uint64_t, ThreadTime> waiters;  // by tid
    NamedThreads named;
    std::map<std::pair<uint64_t, uint64_t>, uint64_t> objects;  // (pid, object) -> waits
    std::map<uint64_t, std::pair<uint64_t, uint64_t>> sites;    // site -> (waits, a stack)
    HolderStateCounts holder_states{};
    std::map<uint64_t, GoroutineWaits> goroutine_waiters;    // by goid
    std::map<uint64_t, GoroutineWaits> goroutine_releasers;  // by goid
  };
  // (kind, pid, object | site | tid); kByContext: (kind, 0 or 1 when unknown, value)
  using GroupKey = std::tuple<uint8_t, uint64_t, uint64_t>;

  struct WaitTimes {
    uint64_t count = 1;
    uint64_t total = 0;
    uint64_t max = 0;
  };
  void addWaits(const format::LockInterval& row, const WaitClass& wait,
                std::optional<uint64_t> value, const WaitTimes& times);

  uint64_t siteOf(uint64_t stack_id) const { return site_of_ ? site_of_(stack_id) : stack_id; }

  WaitGrouping grouping_;
  SiteOf site_of_;
  std::map<GroupKey, Group> groups_;
  struct Kind {
    DurationDistribution waits;
    std::set<std::pair<uint64_t, uint64_t>> objects;  // (pid, object)
  };
  std::map<uint8_t, Kind> kinds_;
};

}  // namespace incise::analyzer
