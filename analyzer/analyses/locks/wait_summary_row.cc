#include "analyzer/analyses/locks/wait_summary_row.h"

namespace incise::analyzer {

format::LockInterval waitRowOf(const format::WaitSummary& summary) {
  // The recorder summarises only contended-mode futex waits it read the
  // facts of (recorder/sources/short_waits.h), with no owner and no goroutine.
  return {.time = summary.time,
          .acquired_time = summary.end_time < summary.time ? summary.time : summary.end_time,
          .pid = summary.pid,
          .tid = summary.tid,
          .address = summary.address,
          .lock_kind = static_cast<uint64_t>(format::LockKind::kFutex),
          .flags = format::kLockContended | format::kLockContendedOnly | format::kLockFutexFacts,
          .stack_id = summary.stack_id,
          .releaser_tid = summary.releaser_tid,
          .object = summary.object,
          .releaser_stack_id = summary.releaser_stack_id};
}

}  // namespace incise::analyzer
