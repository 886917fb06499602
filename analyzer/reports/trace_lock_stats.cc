#include "analyzer/reports/trace_lock_stats.h"

#include "analyzer/reports/trace_lock_rows.h"

namespace incise::analyzer {

TraceLockStats readLockStats(Trace& trace, LockGrouping grouping, LockSites& sites,
                             size_t top_threads) {
  LockStatsBuilder stats(grouping, [&](uint64_t stack) { return sites.siteOf(stack); });
  TraceLockStats result;
  result.counts = streamLockRows(trace, {.acquisition =
                                             [&](const Acquisition& a) {
                                               sites.add(a.lock.pid, a.stack_id, a.time);
                                               stats.add(a);
                                             },
                                         .section =
                                             [&](const CriticalSection& s) {
                                               sites.add(s.lock.pid, s.stack_id, s.start);
                                               stats.add(s);
                                             }});
  result.groups = stats.finish(top_threads);
  return result;
}

}  // namespace incise::analyzer
