// Per-lock and per-acquire-site statistics for `incise locks`.
//
// Groups a LockTimeline by lock (pid, address) or by acquire site, and
// computes per group: acquisitions, contended share, the wait and hold
// distributions (nearest-rank p50/p90/p99 and max), the threads that waited
// and held longest, and a log2 histogram of hold times. Waits are
// request -> acquired for every acquisition (mode `all`), or the futex waits
// themselves (mode `contended`); holds come from critical sections, which
// are inferred in contended mode (LockGroupStats::hold_inferred).
//
// A site is whatever the caller says a stack id maps to (e.g. the first user
// frame outside libc): `site_of` turns an acquire stack id into a site id.
//
// LockStatsBuilder takes acquisitions and sections one at a time (straight
// from a LockRowStream), so memory is per group, not per row: the wait and
// hold DurationDistributions (exact up to 4096 values each, then a
// histogram within 0.8%), and per group the threads, locks and sites seen.
//
//   LockTimeline timeline = buildLockTimeline(rows);
//   auto groups = computeLockStats(timeline, LockGrouping::kByLock, {}, /*top_threads=*/3);
//   for (const LockGroupStats& g : groups) print(g.lock.address, g.hold.p99);
//
//   LockStatsBuilder stats(LockGrouping::kBySite, site_of);
//   LockRowStream stream({.acquisition = [&](auto& a) { stats.add(a); },
//                         .section = [&](auto& s) { stats.add(s); }});
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <tuple>
#include <vector>

#include "analyzer/analyses/distributions/duration_distribution.h"
#include "analyzer/analyses/distributions/log2_histogram.h"
#include "analyzer/analyses/locks/critical_sections.h"
#include "analyzer/analyses/locks/wait_kind.h"

namespace incise::analyzer {

struct ThreadTime {
  uint64_t pid = 0;
  uint64_t tid = 0;
  uint64_t count = 0;
  uint64_t ns = 0;
};

inline constexpr size_t kHolderStates = 6;  // format::HolderState values
using HolderStateCounts = std::array<uint64_t, kHolderStates>;

// A thread that waits name: a lock's holder, a semaphore's poster, a
// condvar's signaller, a thread joined.
struct NamedThread {
  uint64_t pid = 0;
  uint64_t tid = 0;
  uint64_t waits = 0;
  uint64_t ns = 0;           // wait time of the waits naming it
  uint64_t exact_waits = 0;  // of `waits`, those where it is known exactly
  uint64_t stack_id = 0;     // the stack it woke waiters from most often; 0 = none
  // Exact when most of its waits know it exactly.
  HoldSource source() const {
    return exact_waits * 2 >= waits ? HoldSource::kExact : HoldSource::kInferred;
  }
};

// The threads waits name, with the wait time and the waker stacks of each.
class NamedThreads {
 public:
  // `waits` waits of `wait_ns` in all (more than one: a recorder's summary).
  void add(uint64_t pid, uint64_t tid, uint64_t wait_ns, bool exact, uint64_t waker_stack_id,
           uint64_t waits = 1);
  // By wait ns, most first; at most `limit`.
  std::vector<NamedThread> top(size_t limit) const;

 private:
  static constexpr size_t kStacksKept = 16;
  struct Named {
    uint64_t pid = 0;
    uint64_t waits = 0;
    uint64_t ns = 0;
    uint64_t exact_waits = 0;
    std::map<uint64_t, uint64_t> stacks;  // waker stack -> uses, at most kStacksKept
  };
  std::map<uint64_t, Named> by_tid_;
};

enum class LockGrouping { kByLock, kBySite };

using SiteOf = std::function<uint64_t(uint64_t stack_id)>;

struct LockGroupStats {
  LockId lock;                 // kByLock: the lock; kBySite: the lock most acquired at the site
  uint64_t site = 0;           // kBySite: the site; kByLock: the site acquiring it most
  uint64_t site_stack_id = 0;  // a stack of that site, for naming it
  uint64_t locks = 0;          // distinct locks in the group
  uint64_t kind = 0;           // format::LockKind of the first acquisition
  uint64_t acquisitions = 0;
  uint64_t contended = 0;
  Distribution wait;
  Distribution hold;
  bool hold_inferred = false;           // some holds are inferred (contended mode)
  std::vector<ThreadTime> top_waiters;  // by wait ns, longest first
  std::vector<ThreadTime> top_holders;  // by hold ns, longest first
  Log2Histogram hold_histogram{};
  // From noteWait: the kind most waits had, the holders the waits name (by
  // the wait time each accounts for), and their states when waits began.
  WaitKind wait_kind = WaitKind::kFutex;
  std::vector<NamedThread> blamed;
  uint64_t holder_tid = 0;  // the first of `blamed`: held it longest while others waited
  HoldSource hold_source = HoldSource::kNone;
  HolderStateCounts holder_states{};
  // Go mutexes: the holds while others waited by where they start, and the
  // goroutine that held it longest in them (0: none, or ids not known).
  GoHoldCounts go_holds;
  uint64_t holder_goid = 0;
};

class LockStatsBuilder {
 public:
  // An empty `site_of` uses the stack id as the site.
  LockStatsBuilder(LockGrouping grouping, SiteOf site_of);
  void add(const Acquisition& acquisition);
  void add(const CriticalSection& section);
  // The wait kind and the holder of one lock row (whose address is already
  // the object's, WaitClassifier::normalized), in its group.
  void noteWait(const format::LockInterval& row, const WaitClass& wait);
  // Groups sorted by total wait, then total hold, longest first.
  std::vector<LockGroupStats> finish(size_t top_threads) const;

 private:
  // Which lock and site name a group: recorded acquisitions vote; sections
  // vote only for a group without any acquisition. Sites are counted
  // Space-Saving style in kSiteCandidates slots (a new site takes the least
  // used slot and its count, plus one): exact up to that many sites per
  // group, and a site with more than 1/kSiteCandidates of the votes always
  // keeps its slot, so a lock taken at hundreds of sites costs 16 entries.
  static constexpr size_t kSiteCandidates = 16;
  struct Votes {
    std::map<LockId, uint64_t> locks;
    std::map<uint64_t, std::pair<uint64_t, uint64_t>> sites;  // site -> (uses, a stack)
    uint64_t first_kind = 0;
  };
  struct Group {
    uint64_t acquisitions = 0;
    uint64_t contended = 0;
    uint64_t sections = 0;
    bool hold_inferred = false;
    DurationDistribution waits;
    DurationDistribution holds;
    std::map<uint64_t, ThreadTime> waiters;  // by tid
    std::map<uint64_t, ThreadTime> holders;
    Votes acquisition_votes;
    Votes section_votes;
    Log2Histogram hold_histogram{};
    std::array<uint64_t, kAllWaitKinds.size()> wait_kinds{};
    NamedThreads blamed;
    HolderStateCounts holder_states{};
    GoHoldCounts go_holds;
    std::map<uint64_t, uint64_t> goroutine_hold_ns;  // by goid
  };
  using GroupKey = std::tuple<uint64_t, uint64_t, uint64_t>;  // pid, address, site

  Group& groupOf(const LockId& lock, uint64_t stack_id);
  void vote(Votes& votes, const LockId& lock, uint64_t stack_id, uint64_t kind);
  uint64_t siteOf(uint64_t stack_id) const { return site_of_ ? site_of_(stack_id) : stack_id; }

  LockGrouping grouping_;
  SiteOf site_of_;
  std::map<GroupKey, Group> groups_;
};

// Every acquisition and section of `timeline` through a LockStatsBuilder.
std::vector<LockGroupStats> computeLockStats(const LockTimeline& timeline, LockGrouping grouping,
                                             const SiteOf& site_of, size_t top_threads);

}  // namespace incise::analyzer
