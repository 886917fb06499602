// The analysis behind `incise correlate`: one time-ordered pass over a
// trace's lock rows, switches, samples, page faults and wake-ups, giving
// what lock holders did inside their sections (holder_activity.h) and who
// woke the longest waiters (wake_chains.h).
//
// Filters narrow what the story is about, not what explains it: the pass
// reads every row of the file, so a holder or waker outside --pid, --tid or
// --comm still explains a wait of a thread inside them, and a holder that
// was switched out before the --time window is off-CPU inside it. The
// filter becomes a HolderFocus (only the focus threads' waits start wake
// chains; groups say whether their holder or their waiters are in focus).
// Each row's wait kind is WaitClassifier's (trace_wait_kinds.h), as in
// `incise locks` and `incise waits`: waits that do not blame a holder (a
// join, condvar, semaphore, runtime park or unknown futex; correlate_blame.h)
// make no section and no chain; they are only counted, per kind.
//
// Memory: see holder_activity.h and wake_chains.h; what grows is per
// (holder, lock, site) group and per site.
//
//   LockSites sites(trace.symbolizer(), trace.stacks());
//   Correlation c = correlateTrace(trace, sites, /*chains=*/5);
//   for (const HeldLock& h : c.activity.held) ...;
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/analyses/correlate/correlate_blame.h"
#include "analyzer/analyses/locks/critical_sections.h"
#include "analyzer/analyses/locks/holder_activity.h"
#include "analyzer/analyses/locks/wake_chains.h"

namespace incise::analyzer {

class Trace;
class LockSites;

struct Correlation {
  HolderActivity activity;
  std::vector<WakeChain> chains;  // the longest focus waits first
  LockRowCounts counts;
  // Of the focus threads, in the window: sections held, blamed waits.
  uint64_t sections = 0;
  uint64_t waits = 0;
  uint64_t holder_switches = 0;  // switches in and out of lock holders
  UnblamedWaits unblamed;        // of the focus threads
  bool thread_filter = false;    // --pid, --tid or --comm narrowed the focus
  bool filtered = false;         // that, or --time
};

Correlation correlateTrace(Trace& trace, LockSites& sites, size_t chains);

// Chains stop after this many links.
inline constexpr size_t kChainDepth = 4;

}  // namespace incise::analyzer
