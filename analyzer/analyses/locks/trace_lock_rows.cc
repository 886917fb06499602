#include "analyzer/analyses/locks/trace_lock_rows.h"

#include "analyzer/model/time_ordered_rows.h"

namespace incise::analyzer {

LockRowCounts streamLockRows(Trace& trace, LockRowSinks sinks, const LockRowAdmit& admit) {
  LockRowStream stream(std::move(sinks));
  TimeOrderedRows<format::LockInterval> rows(trace);
  for (const format::LockInterval* row; (row = rows.peek()) != nullptr; rows.pop()) {
    if (!admit) {
      stream.add(*row);
      continue;
    }
    format::LockInterval admitted = *row;
    if (admit(admitted)) stream.add(admitted);
  }
  return stream.finish();
}

}  // namespace incise::analyzer
