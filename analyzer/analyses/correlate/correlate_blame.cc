#include "analyzer/analyses/correlate/correlate_blame.h"

#include "analyzer/analyses/locks/wait_summary_row.h"

namespace incise::analyzer {

void UnblamedWaits::add(const format::LockInterval& row, const WaitClass& wait) {
  if (!isWait(row)) return;
  uint64_t duration = row.acquired_time >= row.time ? row.acquired_time - row.time : 0;
  if (count == 0 || duration > longest.acquired_time - longest.time) {
    longest = row;
    longest_kind = wait.kind;
  }
  ++count;
  total_ns += duration;
  totals_.add(row, wait);
}

void UnblamedWaits::add(const format::WaitSummary& summary, const WaitClass& wait) {
  if (summary.count == 0) return;
  if (count == 0 || summary.max_ns > longest.acquired_time - longest.time) {
    longest = waitRowOf(summary);
    longest.acquired_time = longest.time + summary.max_ns;
    longest_kind = wait.kind;
  }
  count += summary.count;
  total_ns += summary.total_ns;
  totals_.add(summary, wait);
}

}  // namespace incise::analyzer
