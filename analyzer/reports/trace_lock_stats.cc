#include "analyzer/reports/trace_lock_stats.h"

#include "analyzer/model/time_ordered_rows.h"

namespace incise::analyzer {

TraceLockStats readLockStats(Trace& trace, LockGrouping grouping, LockSites& sites,
                             size_t top_threads) {
  LockStatsBuilder stats(grouping, [&](uint64_t stack) { return sites.siteOf(stack); });
  LockRowStream stream({.acquisition =
                            [&](const Acquisition& a) {
                              sites.add(a.lock.pid, a.stack_id, a.time);
                              stats.add(a);
                            },
                        .section =
                            [&](const CriticalSection& s) {
                              sites.add(s.lock.pid, s.stack_id, s.start);
                              stats.add(s);
                            }});
  // Time order, so a stream that settles waits as time passes can rely on it.
  TimeOrderedRows<format::LockInterval> rows(trace);
  for (const format::LockInterval* row; (row = rows.peek()) != nullptr; rows.pop()) {
    stream.add(*row);
  }
  TraceLockStats result;
  result.counts = stream.finish();
  result.groups = stats.finish(top_threads);
  return result;
}

}  // namespace incise::analyzer
