// readLockStats: a trace's lock rows (those passing its filter) streamed
// into per-group statistics, without holding the rows.
//
// The one wiring of WaitClassifier -> LockRowStream -> LockSites +
// LockStatsBuilder that `incise locks` and `incise diff` share: each row's
// wait kind is decided first (trace_wait_kinds.h); rows on locks (mutex,
// rwlock, spin, custom) go on with their object's address as the lock, so
// every futex word of one rwlock counts in one group; each acquisition and
// section names its acquire site as it arrives (symbolized once, in its
// process, at its time) and is counted into its group. Semaphore waits go to
// their own statistics (poster instead of holder); other waits (condvar,
// join, park, unknown futex) are only counted, for `incise waits`. Memory is
// what LockRowStream, LockStatsBuilder and WaitStatsBuilder keep (per group
// and per in-progress wait, nothing per acquisition).
//
//   LockSites sites(trace.symbolizer(), trace.stacks());
//   TraceLockStats stats = readLockStats(trace, LockGrouping::kBySite, sites, /*top_threads=*/3);
//   for (const LockGroupStats& g : stats.groups) std::cout << sites.name(g.site);
#pragma once

#include <vector>

#include "analyzer/analyses/locks/critical_sections.h"
#include "analyzer/analyses/locks/lock_sites.h"
#include "analyzer/analyses/locks/lock_stats.h"
#include "analyzer/analyses/locks/wait_stats.h"
#include "analyzer/model/trace.h"

namespace incise::analyzer {

struct TraceLockStats {
  LockRowCounts counts;
  std::vector<LockGroupStats> groups;       // LockStatsBuilder::finish order
  std::vector<WaitGroupStats> semaphores;   // per semaphore, by total wait
  std::vector<WaitKindTotals> other_waits;  // condvar, join, park, futex: see incise waits
};

// `sites` gets every acquire site seen; it names the groups afterwards.
TraceLockStats readLockStats(Trace& trace, LockGrouping grouping, LockSites& sites,
                             size_t top_threads);

}  // namespace incise::analyzer
