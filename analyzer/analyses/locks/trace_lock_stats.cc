#include "analyzer/analyses/locks/trace_lock_stats.h"

#include "analyzer/analyses/locks/trace_lock_rows.h"
#include "analyzer/analyses/locks/trace_wait_kinds.h"
#include "analyzer/analyses/locks/wait_summary_row.h"
#include "analyzer/analyses/summaries/trace_summaries.h"

namespace incise::analyzer {

TraceLockStats readLockStats(Trace& trace, LockGrouping grouping, LockSites& sites,
                             size_t top_threads) {
  SiteOf site_of = [&](uint64_t stack) { return sites.siteOf(stack); };
  LockStatsBuilder stats(grouping, site_of);
  WaitStatsBuilder semaphores(WaitGrouping::kByObject, site_of);
  WaitStatsBuilder others(WaitGrouping::kByObject, site_of);
  WaitClassifier classifier(trace);
  TraceLockStats result;
  result.counts =
      streamLockRows(trace,
                     {.acquisition =
                          [&](const Acquisition& a) {
                            sites.add(a.lock.pid, a.stack_id, a.time);
                            stats.add(a);
                          },
                      .section =
                          [&](const CriticalSection& s) {
                            sites.add(s.lock.pid, s.stack_id, s.start);
                            stats.add(s);
                          }},
                     [&](format::LockInterval& row) {
                       WaitClass wait = classifier.classify(row);
                       if (isLockKind(wait.kind)) {
                         row = classifier.normalized(row, wait);
                         sites.add(row.pid, row.stack_id, row.time);
                         stats.noteWait(row, wait);
                         return true;
                       }
                       sites.add(row.pid, row.stack_id, row.time);
                       (wait.kind == WaitKind::kSemaphore ? semaphores : others).add(row, wait);
                       return false;
                     });
  // Summarised short waits are on condvars and semaphores, never a lock's
  // word (recorder/sources/short_waits.h): none has a holder to group by.
  forEachWaitSummary(trace, [&](const format::WaitSummary& summary) {
    format::LockInterval shared = waitRowOf(summary);
    WaitClass wait = classifier.classify(shared);
    sites.add(shared.pid, shared.stack_id, shared.time);
    (wait.kind == WaitKind::kSemaphore ? semaphores : others).add(summary, wait);
  });
  result.groups = stats.finish(top_threads);
  result.semaphores = semaphores.finish(top_threads);
  result.other_waits = others.kinds();
  return result;
}

}  // namespace incise::analyzer
