#include "analyzer/analyses/correlate/correlate_blame.h"

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

}  // namespace incise::analyzer
